import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { validateResource } from '@sigil/proto/resources';
import { lineStart } from '../src/pages/settings/YamlEditor.tsx';
import { appliedDocuments, pathSegments, placeProblems, syntaxProblems, type ResourceProblem } from '../src/pages/settings/yamlLines.ts';

const problem = (document: number, path: string, message = 'is wrong'): ResourceProblem => ({ document, kind: '', namespace: 'default', name: '', path, message });
const lines = (text: string, problems: ResourceProblem[]) => placeProblems(text, problems).map((p) => p.line);

const POLICY = `apiVersion: backups.strata.dev/v1alpha1
kind: BackupPolicy
metadata:
  name: nightly
spec:
  store: local
  full:
    schedule: "* * *"
`;

const TARGET = `apiVersion: backups.strata.dev/v1alpha1
kind: BackupTarget
metadata:
  name: orders
spec:
  engine: postgres
  endpoint:
    port: 5432
  credentials:
    secretRef:
      name: orders-db
  policy: nightly
`;

/** The problems the console API reports for `text`: each document validated as the catalog does (resources.ts). */
function problemsOf(text: string): ResourceProblem[] {
  const values = parseAllDocuments(text).map((doc) => doc.toJSON() as unknown).filter((v) => v !== null && v !== undefined);
  return values.flatMap((value, index) => {
    const result = validateResource(value);
    return result.ok ? [] : result.errors.map((e) => problem(index + 1, e.path, e.message));
  });
}

describe('placing an apply’s problems against the lines of its YAML', () => {
  it('a bad schedule in one document and a missing required field in another: both, each on its own line', () => {
    const text = `${POLICY}---\n${TARGET}`;
    const problems = problemsOf(text);
    expect(problems.map((p) => [p.document, p.path])).toEqual([
      [1, 'spec.full.schedule'],
      [2, 'spec.endpoint.host'],
    ]);
    const placed = placeProblems(text, problems);
    // Line 8 is `schedule: "* * *"`; the target's endpoint has no host, so its parent `endpoint:` (line 16) stands for it.
    expect(placed.map((p) => [p.line, p.exact])).toEqual([
      [8, true],
      [16, false],
    ]);
    expect(text.split('\n')[15]).toBe('  endpoint:');
  });

  it('the whole document ("" path) is its first line, after comments and the separator', () => {
    const text = `# stores\n---\n${POLICY}---\n\n${TARGET}`;
    expect(lines(text, [problem(1, ''), problem(2, '')])).toEqual([3, 13]);
  });

  it('skips empty documents as the API does, so the numbers still match', () => {
    const text = `---\n# only a comment\n---\n${POLICY}---\n---\n${TARGET}`;
    expect(lines(text, [problem(1, 'kind'), problem(2, 'kind')])).toEqual([5, 15]);
  });

  it('counts the items of a kind: List one each', () => {
    const text = `apiVersion: v1\nkind: List\nitems:\n  - kind: BackupStore\n    metadata: {name: a}\n  - kind: BackupPolicy\n    metadata:\n      name: b\n`;
    expect(appliedDocuments(text)).toHaveLength(2);
    expect(lines(text, [problem(1, ''), problem(2, 'metadata.name')])).toEqual([4, 8]);
  });

  it('counts the items of one top-level YAML list one each, and a List after another document as its items', () => {
    const list = `- kind: BackupStore\n  metadata: {name: a}\n- kind: BackupPolicy\n`;
    expect(lines(list, [problem(2, 'kind')])).toEqual([3]);
    const mixed = `${POLICY}---\nkind: BackupTargetList\nitems:\n- kind: BackupTarget\n- kind: BackupTarget\n  spec: {engine: oracle}\n`;
    expect(lines(mixed, [problem(3, 'spec.engine')])).toEqual([14]);
  });

  it('follows list indexes and quoted keys of a path', () => {
    const text = `kind: BackupTarget\nmetadata:\n  labels:\n    backups.strata.dev/env: "prod!"\nspec:\n  scope:\n    queries:\n      - name: a\n        sql: select 1\n      - name: b\n        sql: ""\n`;
    expect(lines(text, [problem(1, 'metadata.labels["backups.strata.dev/env"]'), problem(1, 'spec.scope.queries[1].sql'), problem(1, 'spec.scope.queries[0]')])).toEqual([4, 11, 8]);
  });

  it('finds a dotted key a Secret’s path names without quotes (data.tls.crt)', () => {
    const text = `apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  tls.crt: "%%"\n`;
    expect(placeProblems(text, [problem(1, 'data.tls.crt')])[0]).toMatchObject({ line: 6, exact: true });
  });

  it('a field the text no longer has falls back to its parent; a document the text no longer has has no line', () => {
    expect(placeProblems(POLICY, [problem(1, 'spec.retain.daily'), problem(2, 'kind')]).map((p) => [p.line, p.exact])).toEqual([
      [5, false],
      [undefined, false],
    ]);
  });

  it('follows the text as edited: two lines added above move the problem down by two', () => {
    const edited = POLICY.replace('spec:\n', 'spec:\n  # keep\n  # both\n');
    expect(lines(POLICY, [problem(1, 'spec.full.schedule')])).toEqual([8]);
    expect(lines(edited, [problem(1, 'spec.full.schedule')])).toEqual([10]);
  });
});

describe('path segments', () => {
  it('splits dots, list indexes and JSON-quoted keys', () => {
    expect(pathSegments('spec.scope.queries[0].sql')).toEqual(['spec', 'scope', 'queries', 0, 'sql']);
    expect(pathSegments('metadata.labels["a.b/c"].x')).toEqual(['metadata', 'labels', 'a.b/c', 'x']);
    expect(pathSegments('')).toEqual([]);
  });
});

describe('YAML syntax errors', () => {
  it('lists every one with its line', () => {
    const text = `kind: BackupPolicy\nspec:\n  full: [unclosed\n---\nkind: BackupStore\nmetadata:\n  name: a\n bad: indent\n`;
    expect(syntaxProblems(text)).toEqual([
      { line: 4, message: 'Flow sequence in block collection must be sufficiently indented and end with a ]' },
      { line: 8, message: 'All mapping items must start at the same column' },
    ]);
    expect(syntaxProblems(POLICY)).toEqual([]);
  });
});

describe('where "Go to line" puts the cursor', () => {
  it('at the first non-blank character of the line, and at the end past the last line', () => {
    const text = 'a: 1\nb:\n    c: 2\n';
    expect(lineStart(text, 1)).toBe(0);
    expect(lineStart(text, 3)).toBe(text.indexOf('c: 2'));
    expect(lineStart(text, 9)).toBe(text.length);
  });
});
