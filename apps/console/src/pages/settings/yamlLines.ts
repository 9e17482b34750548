import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Document, type Node } from 'yaml';

/** One problem the console API reports about an applied document (a refusal's `errors`, or an apply's `warnings`). */
export interface ResourceProblem {
  /** The document's position in the apply, 1-based; the items of a `kind: List` count one each. */
  document: number;
  kind: string;
  namespace: string;
  name: string;
  /** The field, as `spec.full.schedule`, `spec.scope.queries[0].sql` or `metadata.labels["a.b/c"]`; '' for the whole document. */
  path: string;
  message: string;
}

/** A problem placed in the text: `line` (1-based) is where its field is written, or undefined when no document is there. */
export interface PlacedProblem extends ResourceProblem {
  line: number | undefined;
  /** False when the field itself is not in the text (a required field left out): `line` is then its nearest parent's. */
  exact: boolean;
}

/** One resource document as the console API counts them: the YAML node that holds it, and the document it is in. */
interface AppliedDocument {
  node: Node;
  doc: Document;
}

/**
 * The documents of `text` numbered as the console API numbers them (packages/kit strata-app decodeYamlBody, then the
 * catalog's parseDocuments): empty YAML documents are skipped; a single document that is a list gives one document per
 * item; and every `kind: …List` with `items` gives one per item.
 */
export function appliedDocuments(text: string, lineCounter = new LineCounter()): AppliedDocument[] {
  const docs = parseAllDocuments(text, { lineCounter });
  const values: AppliedDocument[] = [];
  for (const doc of docs) {
    // The API drops documents whose value is null: empty ones, comments only, or a bare `~`.
    const node = doc.contents;
    if (node && !(isScalar(node) && node.value === null)) values.push({ node, doc });
  }
  const only = values[0];
  const body = values.length === 1 && only && isSeq(only.node) ? only.node.items.map((item) => ({ node: item as Node, doc: only.doc })) : values;
  return body.flatMap((entry) => listItems(entry) ?? [entry]);
}

/** The items of a `kind: <Something>List` with an `items` list (what the catalog's isList unpacks), or undefined. */
function listItems({ node, doc }: AppliedDocument): AppliedDocument[] | undefined {
  if (!isMap(node)) return undefined;
  const kind = node.get('kind');
  const items = node.get('items', true);
  if (typeof kind !== 'string' || !kind.endsWith('List') || !isSeq(items)) return undefined;
  return items.items.map((item) => ({ node: item as Node, doc }));
}

/**
 * The segments of a problem's path: `spec.scope.queries[0].sql` → spec, scope, queries, 0, sql;
 * `metadata.labels["backups.strata.dev/env"]` → metadata, labels, backups.strata.dev/env.
 */
export function pathSegments(path: string): (string | number)[] {
  const segments: (string | number)[] = [];
  const token = /\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|([^.[\]]+)/g;
  for (const match of path.matchAll(token)) {
    if (match[1] !== undefined) segments.push(Number(match[1]));
    else if (match[2] !== undefined) segments.push(JSON.parse(match[2]) as string);
    else if (match[3] !== undefined) segments.push(match[3]);
  }
  return segments;
}

/** The 1-based line of a node's first character. */
function lineOf(node: { range?: readonly number[] | null } | null | undefined, lineCounter: LineCounter): number | undefined {
  const offset = node?.range?.[0];
  return offset === undefined ? undefined : lineCounter.linePos(offset).line;
}

/**
 * Where `path` is written in one document: the line of the key (or list item) it names, walking down as far as the
 * text goes. A dotted key (a Secret's `data.tls.crt` names the key `tls.crt`) is tried when the single segment is not
 * there.
 */
function locate(entry: AppliedDocument, path: string, lineCounter: LineCounter): { line: number | undefined; exact: boolean } {
  const segments = pathSegments(path);
  let node: unknown = entry.node;
  let line = lineOf(entry.node, lineCounter);
  let index = 0;
  while (index < segments.length) {
    if (isAlias(node)) node = node.resolve(entry.doc);
    const segment = segments[index] as string | number;
    if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment] as Node | undefined;
      if (!item) break;
      line = lineOf(item, lineCounter) ?? line;
      node = item;
      index += 1;
      continue;
    }
    const found = isMap(node) ? findKey(node.items, segments, index) : undefined;
    if (!found) break;
    line = lineOf(found.pair.key as Node, lineCounter) ?? line;
    node = found.pair.value;
    index += found.used;
  }
  return { line, exact: index === segments.length };
}

type MapPair = { key: unknown; value: unknown };

/** The pair whose key is `segments[from]`, or the longest run of segments joined by dots. */
function findKey(pairs: readonly MapPair[], segments: readonly (string | number)[], from: number): { pair: MapPair; used: number } | undefined {
  let joined = '';
  for (let used = 1; from + used <= segments.length; used += 1) {
    joined = used === 1 ? String(segments[from]) : `${joined}.${String(segments[from + used - 1])}`;
    const pair = pairs.find((p) => isScalar(p.key) && String(p.key.value) === joined);
    if (pair) return { pair, used };
  }
  return undefined;
}

/**
 * Places every problem against the line of `text` it is about: its document (as the API numbered them) and, within it,
 * its field. The text is the one the person sees now: edited since the apply, the lines follow the edit.
 */
export function placeProblems(text: string, problems: readonly ResourceProblem[]): PlacedProblem[] {
  const lineCounter = new LineCounter();
  const documents = appliedDocuments(text, lineCounter);
  return problems.map((problem) => {
    const entry = documents[problem.document - 1];
    if (!entry) return { ...problem, line: undefined, exact: false };
    return { ...problem, ...locate(entry, problem.path, lineCounter) };
  });
}

/** A YAML syntax error with its line, as the `yaml` package finds it (the API reports only the first one). */
export interface SyntaxProblem {
  line: number;
  message: string;
}

/** Every syntax error of `text`, in order, each with its line. */
export function syntaxProblems(text: string): SyntaxProblem[] {
  const lineCounter = new LineCounter();
  return parseAllDocuments(text, { lineCounter }).flatMap((doc) =>
    doc.errors.map((error) => ({
      line: error.linePos?.[0].line ?? lineCounter.linePos(error.pos[0]).line,
      // The package adds where (`at line 8, column 1:`) and the line drawn with a caret; the list shows the line instead.
      message: (error.message.split('\n')[0] ?? error.message).replace(/ at line \d+, column \d+:?$/, ''),
    })),
  );
}
