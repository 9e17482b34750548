import { listOperations, loadSigilOpenApi, type OpenApiDocument, type OperationInfo } from '@sigil/proto/openapi';

/** What the matcher says about a request path and method. */
export type OperationMatch =
  | { kind: 'operation'; operation: OperationInfo; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

interface CompiledPath {
  template: string;
  /** A literal segment, or `null` for a `{param}` segment (its name is in `names`). */
  segments: Array<string | null>;
  names: string[];
  byMethod: Map<string, OperationInfo>;
}

export interface OperationMatcher {
  match(method: string, path: string): OperationMatch;
  readonly operations: readonly OperationInfo[];
}

/**
 * Matches request paths against the templates of the contract (`listOperations`), segment by segment.
 * A literal segment beats a `{param}` segment at the same position (`/v1/public/anchors/latest` before
 * `/v1/public/anchors/{sequence}`), which is the OpenAPI rule for overlapping templates.
 */
export function createOperationMatcher(doc: OpenApiDocument = loadSigilOpenApi()): OperationMatcher {
  const operations = listOperations(doc);
  const byTemplate = new Map<string, CompiledPath>();
  for (const op of operations) {
    let compiled = byTemplate.get(op.path);
    if (!compiled) {
      const names: string[] = [];
      const segments = splitSegments(op.path).map((segment) => {
        const param = /^\{([^}]+)\}$/.exec(segment);
        if (!param) return segment;
        names.push(param[1] as string);
        return null;
      });
      compiled = { template: op.path, segments, names, byMethod: new Map() };
      byTemplate.set(op.path, compiled);
    }
    compiled.byMethod.set(op.method, op);
  }
  // Most specific first: at the first differing position a literal wins over a parameter.
  const paths = [...byTemplate.values()].sort(compareSpecificity);

  return {
    operations,
    match(method, rawPath) {
      const segments = requestSegments(rawPath);
      if (!segments) return { kind: 'not-found' };
      const compiled = paths.find((candidate) => matches(candidate, segments));
      if (!compiled) return { kind: 'not-found' };
      const upper = method.toUpperCase();
      // HEAD is answered by the GET operation (the service's Express router does the same).
      const operation = compiled.byMethod.get(upper) ?? (upper === 'HEAD' ? compiled.byMethod.get('GET') : undefined);
      if (!operation) return { kind: 'method-not-allowed', allowed: [...compiled.byMethod.keys()] };
      const params: Record<string, string> = {};
      let index = 0;
      compiled.segments.forEach((segment, position) => {
        if (segment === null) params[compiled.names[index++] as string] = decodeURIComponent(segments[position] as string);
      });
      return { kind: 'operation', operation, params };
    },
  };
}

function splitSegments(path: string): string[] {
  return path.split('/').slice(1);
}

/**
 * The segments of a request path, or undefined when it can never be routed: empty segments (`//`,
 * a trailing `/`), dot segments (also percent-encoded), encoded slashes or backslashes, undecodable
 * escapes. An upstream could normalise such a path into one another service or auth rule owns.
 */
function requestSegments(path: string): string[] | undefined {
  if (!path.startsWith('/')) return undefined;
  const segments = splitSegments(path);
  for (const segment of segments) {
    if (segment === '') return undefined;
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return undefined;
    }
    if (decoded === '.' || decoded === '..' || decoded.includes('/') || decoded.includes('\\')) return undefined;
  }
  return segments;
}

function matches(compiled: CompiledPath, segments: string[]): boolean {
  if (compiled.segments.length !== segments.length) return false;
  return compiled.segments.every((expected, i) => expected === null || expected === segments[i]);
}

function compareSpecificity(a: CompiledPath, b: CompiledPath): number {
  const length = Math.min(a.segments.length, b.segments.length);
  for (let i = 0; i < length; i++) {
    const aLiteral = a.segments[i] !== null;
    const bLiteral = b.segments[i] !== null;
    if (aLiteral !== bLiteral) return aLiteral ? -1 : 1;
  }
  return a.segments.length - b.segments.length;
}
