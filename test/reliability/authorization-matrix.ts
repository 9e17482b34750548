import { readFile, writeFile } from 'node:fs/promises';
import type { Expectation, MatrixOperation } from './authorization-contract.ts';
import type { BuiltRequest } from './authorization-values.ts';

/** Sending one cell's request, judging its answer, and the Markdown matrix docs/security.md carries. */

export interface Answer {
  status: number;
  /** Sigil: the problem type's slug (`unauthorized`); Strata: none (its errors are `{ error }`). */
  code?: string;
  detail?: string;
  /** The body as text (empty for an event stream, which is not read). */
  text: string;
}

export interface Cell {
  op: MatrixOperation;
  kind: string;
  expectation: Expectation;
  request: BuiltRequest;
  credential: Record<string, string>;
  /** Strings the answer must not contain (another organization's or mode's data), minus what the request itself sent. */
  secrets: string[];
  answer?: Answer;
  failure?: string;
}

const CELL_TIMEOUT_MS = 20_000;

export async function send(base: string, request: BuiltRequest, credential: Record<string, string>): Promise<Answer> {
  const res = await fetch(`${base}${request.path}`, {
    method: request.method,
    headers: { ...request.headers, ...credential },
    body: request.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(CELL_TIMEOUT_MS),
  });
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, text: '' };
  }
  const text = await res.text();
  let code: string | undefined;
  let detail: string | undefined;
  try {
    const body = JSON.parse(text) as { type?: unknown; detail?: unknown };
    if (typeof body.type === 'string') code = body.type.split('/').pop();
    if (typeof body.detail === 'string') detail = body.detail;
  } catch {
    // not JSON: a document, a YAML file, a redirect
  }
  return { status: res.status, code, detail, text };
}

/** Why an answer breaks its expectation, or undefined when it keeps it. */
export function judge(cell: Cell, anonymous: Answer | undefined): string | undefined {
  const { answer, expectation, op } = cell;
  if (!answer) return 'no answer';
  if (answer.status >= 500) return `answered ${answer.status}: ${answer.text.slice(0, 300)}`;
  const leaked = cell.secrets.filter((secret) => secret && answer.text.includes(secret) && !cell.request.sent.includes(secret));
  if (leaked.length) return `the answer carries ${leaked.join(', ')} (another organization's or mode's data)`;
  switch (expectation.kind) {
    case 'refused': {
      const wanted = `${expectation.status}${expectation.code ? ` ${expectation.code}` : ''}${expectation.detail ? ` "${expectation.detail}"` : ''}`;
      const ok = answer.status === expectation.status && (!expectation.code || answer.code === expectation.code) && (!expectation.detail || answer.detail === expectation.detail);
      return ok ? undefined : `expected ${wanted}, got ${describe(answer)}`;
    }
    case 'allowed': {
      if (answer.status === 401) return `expected to pass authorization, got ${describe(answer)}`;
      if (answer.status === 403 && (op.api === 'strata' || answer.detail?.startsWith('Missing permission'))) return `expected to pass authorization, got ${describe(answer)}`;
      if (answer.status === 404 && op.api === 'sigil' && op.addressesId) return `the caller's own resource answered ${describe(answer)}`;
      return undefined;
    }
    case 'as-anonymous': {
      if (!anonymous) return 'the anonymous cell of this public operation has no answer';
      const same = answer.status === anonymous.status && answer.code === anonymous.code;
      return same ? undefined : `a public operation must ignore credentials: anonymous got ${describe(anonymous)}, this got ${describe(answer)}`;
    }
    case 'public':
      return undefined;
  }
}

function describe(answer: Answer): string {
  return `${answer.status}${answer.code ? ` ${answer.code}` : ''}${answer.detail ? ` "${answer.detail.slice(0, 120)}"` : ''}`;
}

/** Runs tasks with at most `limit` at once. */
export async function inParallel<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await run(items[next++] as T);
  });
  await Promise.all(workers);
}

/** One cell of the printed matrix: what was expected, and the status got when the expectation leaves it open. */
export function label(cell: Cell): string {
  const got = cell.answer ? String(cell.answer.status) : '-';
  if (cell.failure) return `**FAIL** ${got}`;
  switch (cell.expectation.kind) {
    case 'refused':
      return String(cell.expectation.status);
    case 'allowed':
      return `ok ${got}`;
    case 'as-anonymous':
      return `= ${got}`;
    case 'public':
      return got;
  }
}

export function markdownTable(title: string, kinds: readonly string[], rows: Array<{ label: string; cells: Map<string, Cell> }>): string {
  const lines = [`| ${title} | ${kinds.join(' | ')} |`, `|---|${kinds.map(() => '---').join('|')}|`];
  for (const row of rows) {
    const cells = kinds.map((kind) => {
      const cell = row.cells.get(kind);
      return cell ? label(cell) : 'missing';
    });
    lines.push(`| ${row.label} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

const START = '<!-- authorization-matrix:start (generated by test/reliability/authorization.test.ts; do not edit) -->';
const END = '<!-- authorization-matrix:end -->';
export const REGENERATE = 'UPDATE_SECURITY_DOC=1 npx vitest run test/reliability/authorization.test.ts';

/**
 * With UPDATE_SECURITY_DOC=1, writes the generated text between the markers of the document; otherwise answers a
 * message when the document's text differs (undefined when it is current).
 */
export async function syncDocument(file: string, generated: string): Promise<string | undefined> {
  const current = await readFile(file, 'utf8');
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  if (start === -1 || end < start) return `${file} lacks the markers of the generated matrix (${START} ... ${END})`;
  const before = current.slice(0, start + START.length);
  const after = current.slice(end);
  const wanted = `${before}\n${generated}\n${after}`;
  if (process.env.UPDATE_SECURITY_DOC === '1') {
    if (wanted !== current) await writeFile(file, wanted);
    return undefined;
  }
  if (wanted === current) return undefined;
  return `${file}'s authorization matrix is stale: regenerate it with \`${REGENERATE}\` and commit the result`;
}
