import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../e2e/stack.ts';
import {
  SIGIL_KINDS,
  STRATA_KINDS,
  expectSigil,
  expectStrata,
  sigilDocument,
  sigilOperations,
  strataDocument,
  strataOperations,
  type SigilKind,
  type SigilOperation,
  type StrataKind,
} from './authorization-contract.ts';
import { inParallel, judge, markdownTable, send, syncDocument, type Answer, type Cell } from './authorization-matrix.ts';
import { setUpSigil, setUpStrata } from './authorization-setup.ts';
import { buildRequest } from './authorization-values.ts';
import { WORLD_PARTS, type World } from './authorization-world.ts';

/**
 * The authorization matrix (issue 32, point 2): every operation of both contracts against every kind of credential,
 * each cell's expected answer derived from the operation's annotations (authorization-contract.ts), the whole matrix
 * printed in docs/security.md. Cells that only refuse run at once, in parallel; cells whose credential is let through
 * and may change what they address (a non-GET) run afterwards, each on resources and sessions of its own.
 */
const SECURITY_DOC = new URL('../../docs/security.md', import.meta.url).pathname;
const CONCURRENCY = 12;
const FRESH_CONCURRENCY = 8;

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
}, 240_000);
afterAll(async () => stack?.stop(), 60_000);

/** Every operationId of a document, read from its paths directly (not through the matrix's own listing). */
function operationIdsOf(doc: { paths: Record<string, Record<string, unknown>> }): string[] {
  const methods = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']);
  return Object.values(doc.paths).flatMap((item) => Object.entries(item).filter(([method]) => methods.has(method)).map(([, op]) => (op as { operationId: string }).operationId));
}

/** A cell needs resources and a session of its own when its credential is let through to something that may change. */
function needsOwnWorld(cell: Cell): boolean {
  return cell.expectation.kind === 'allowed' && cell.op.method !== 'GET';
}

describe('authorization matrix', () => {
  it('answers every cell of sigil.v1 and strata.v1 as the annotations say, and docs/security.md shows it', async () => {
    const base = stack.gatewayUrl;
    const started = Date.now();
    const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
    const [sigil, strata] = await Promise.all([setUpSigil(stack), setUpStrata(stack)]);
    const sigilDoc = sigilDocument();
    const strataDoc = strataDocument();

    const sigilRows = sigilOperations().map((op) => ({
      op,
      cells: new Map<string, Cell>(
        SIGIL_KINDS.map((kind) => {
          const expectation = expectSigil(op, kind);
          const cell: Cell = { op, kind, expectation, request: buildRequest(sigilDoc, op, sigil.source(sigil.world(kind)), { withBody: op.auth !== 'P' }), credential: {}, secrets: op.auth === 'P' ? [] : sigil.secrets(kind) };
          return [kind, cell];
        }),
      ),
    }));
    const strataCredentials = strataOperations().map((op) => ({
      op,
      cells: new Map<string, Cell>(
        STRATA_KINDS.map((kind: StrataKind) => [
          kind,
          { op, kind, expectation: expectStrata(op, kind), request: buildRequest(strataDoc, op, { idFor: () => undefined, bytesFor: () => new Uint8Array() }, { withBody: true }), credential: strata.credential(kind), secrets: [] },
        ]),
      ),
    }));

    const setUp = seconds(started);
    const sigilCells = sigilRows.flatMap((row) => [...row.cells.values()]);
    const strataCells = strataCredentials.flatMap((row) => [...row.cells.values()]);
    const run = async (cell: Cell) => {
      try {
        cell.answer = await send(base, cell.request, cell.credential);
      } catch (error) {
        cell.failure = `request failed: ${(error as Error).message}`;
      }
    };

    // The anonymous answers of public operations first: their other cells are compared with them.
    const anonymous = sigilCells.filter((cell) => cell.expectation.kind === 'public');
    await inParallel(anonymous, CONCURRENCY, async (cell) => run(cell));

    const sharedStarted = Date.now();
    const shared = [...sigilCells, ...strataCells].filter((cell) => cell.expectation.kind !== 'public' && !needsOwnWorld(cell));
    await inParallel(shared, CONCURRENCY, async (cell) => {
      if (cell.op.api === 'sigil') cell.credential = await sigil.credential(cell.op as SigilOperation, cell.kind as SigilKind);
      await run(cell);
    });

    // Sigil's let-through writes each get a new world (and session); Strata's run one by one in document order.
    const sharedTook = seconds(sharedStarted);
    const ownStarted = Date.now();
    const ownWorld = sigilCells.filter(needsOwnWorld);
    await inParallel(ownWorld, FRESH_CONCURRENCY, async (cell) => {
      const op = cell.op as SigilOperation;
      const kind = cell.kind as SigilKind;
      // The parts of a world the request's path addresses (read by filling it once), plus the signer's token.
      const needs = new Set<string>(kind === 'signer token' ? ['signer'] : []);
      buildRequest(sigilDoc, op, { idFor: (prefix) => void needs.add(prefix), bytesFor: () => new Uint8Array() }, { withBody: false });
      const parts = new Set([...needs].filter((part) => (WORLD_PARTS as readonly string[]).includes(part)));
      let world: World | undefined;
      if (parts.size > 0) {
        world = await sigil.freshWorld(kind, parts);
        cell.request = buildRequest(sigilDoc, op, sigil.source(world), { withBody: op.auth !== 'P' });
      }
      cell.credential = await sigil.credential(op, kind, { world });
      await run(cell);
    });
    for (const cell of strataCells.filter(needsOwnWorld)) await run(cell);
    console.log(`authorization matrix: set-up ${setUp}; ${shared.length + anonymous.length} shared cells ${sharedTook}; ${ownWorld.length} own-world cells ${seconds(ownStarted)}`);

    const anonymousOf = new Map(anonymous.map((cell) => [cell.op.row, cell.answer]));
    const failures: string[] = [];
    for (const cell of [...sigilCells, ...strataCells]) {
      cell.failure ??= judge(cell, anonymousOf.get(cell.op.row) as Answer | undefined);
      if (cell.failure) failures.push(`${cell.op.api} ${cell.op.row} [${cell.kind}] ${cell.request.method} ${cell.request.path}: ${cell.failure}`);
    }

    // Coverage: every operation of both documents has a row, and every row every column.
    const rowIds = new Set([...sigilRows, ...strataCredentials].map((row) => row.op.operationId));
    const documented = [...operationIdsOf(sigilDoc as never), ...operationIdsOf(strataDoc as never)];
    expect(documented.filter((id) => !rowIds.has(id)), 'operations without a row').toEqual([]);
    expect(sigilCells.length).toBe(sigilRows.length * SIGIL_KINDS.length);
    expect(strataCells.length).toBe(strataCredentials.length * STRATA_KINDS.length);

    const generated = [
      `${sigilRows.length} Sigil operations × ${SIGIL_KINDS.length} credentials and ${strataCredentials.length} Strata rows × ${STRATA_KINDS.length} credentials: ` +
        `${sigilCells.length + strataCells.length} cells.`,
      '',
      '### Sigil (`sigil.v1`)',
      '',
      markdownTable('operation (x-auth, x-permission)', SIGIL_KINDS, sigilRows.map(({ op, cells }) => ({ label: `\`${op.row}\` ${op.auth}${op.permission ? ` \`${op.permission}\`` : ''}`, cells }))),
      '',
      '### Strata (`strata.v1`)',
      '',
      markdownTable('operation (x-strata-role)', STRATA_KINDS, strataCredentials.map(({ op, cells }) => ({ label: `\`${op.row}\` ${op.role}`, cells }))),
    ].join('\n');
    const drift = await syncDocument(SECURITY_DOC, generated);

    expect(failures, `${failures.length} of ${sigilCells.length + strataCells.length} cells broke their expectation`).toEqual([]);
    expect(drift).toBeUndefined();
  }, 300_000);
});
