import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CompositionError, REPO_ROOT, SUPERGRAPH_PATH, composeSdl, composeSupergraph } from '../src/compose.ts';
import { SUBGRAPHS } from '../src/subgraphs.ts';

const run = promisify(execFile);
const SCRIPT = path.join(REPO_ROOT, 'gateway/scripts/compose.ts');

describe('supergraph composition', () => {
  it('the checked-in supergraph is what the subgraphs compose to (run `npm run compose` if not)', () => {
    expect(readFileSync(SUPERGRAPH_PATH, 'utf8')).toBe(composeSupergraph());
  });

  it('lists every subgraph with a placeholder URL (runtime URLs come from SERVICE_URLS)', () => {
    const sdl = readFileSync(SUPERGRAPH_PATH, 'utf8');
    for (const { name } of SUBGRAPHS) expect(sdl).toContain(`url: "http://${name}.internal/graphql"`);
  });

  it('reports composition errors clearly', () => {
    const clash = [
      { name: 'a', sdl: 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])\ntype Query { thing: Int }' },
      { name: 'b', sdl: 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])\ntype Query { thing: String }' },
    ];
    expect(() => composeSdl(clash)).toThrow(CompositionError);
    expect(() => composeSdl(clash)).toThrow(/Supergraph composition failed:\n {2}- .*thing/);
    expect(() => composeSdl([{ name: 'a', sdl: 'type Query {' }])).toThrow(/Subgraph a: the schema is not valid GraphQL/);
    expect(() => composeSupergraph([{ name: 'accounts', schemaPath: 'nowhere/schema.graphql' }])).toThrow(/Subgraph accounts: cannot read nowhere\/schema.graphql/);
  });

  it('`--check` exits 0 when up to date and 1 with a clear message on drift', async () => {
    const ok = await run(process.execPath, [SCRIPT, '--check']);
    expect(ok.stdout).toContain('is up to date');

    const dir = mkdtempSync(path.join(tmpdir(), 'sigil-compose-'));
    try {
      const stale = path.join(dir, 'supergraph.graphql');
      writeFileSync(stale, readFileSync(SUPERGRAPH_PATH, 'utf8').replace('name: String!', 'name: String'));
      const failure = await run(process.execPath, [SCRIPT, '--check', '--file', stale]).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure?.code).toBe(1);
      expect(failure?.stderr).toMatch(/is out of date.*Run `npm run compose`/);
      expect(failure?.stderr).toContain('First difference at line');

      const missing = await run(process.execPath, [SCRIPT, '--check', '--file', path.join(dir, 'none.graphql')]).catch((error: { code: number; stderr: string }) => error);
      expect((missing as { code: number }).code).toBe(1);
      expect((missing as { stderr: string }).stderr).toContain('is missing');

      await run(process.execPath, [SCRIPT, '--file', stale]);
      expect(readFileSync(stale, 'utf8')).toBe(readFileSync(SUPERGRAPH_PATH, 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
