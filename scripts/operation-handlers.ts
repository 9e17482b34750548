// Which handler serves each operation of the two contracts, read from the sources without starting anything: the
// object literals a service's `src/app.ts` gives its app builder as `handlers`, `publicHandlers` and `tokenHandlers`,
// and the gateway's own `handlers` in `gateway/src/sigil-edge.ts`. Used by test/contract/unimplemented.test.ts and by
// scripts/operations-index.ts (docs/operations.md).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { listOperations, loadSigilOpenApi } from '@sigil/proto/openapi';
import { STRATA } from '@sigil/proto/strata';
import { listStrataOperations, loadStrataOpenApi } from '@sigil/proto/strata-openapi';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..');

export type ContractName = 'sigil' | 'strata';

/** Where a handler is bound: the file (relative to the repository) and the line of its name. */
export interface HandlerSite {
  file: string;
  line: number;
  /** The handler's expression (the arrow function), for readers that look inside it. */
  node: ts.Expression;
  source: ts.SourceFile;
}

export interface OperationRow {
  contract: ContractName;
  operationId: string;
  method: string;
  path: string;
  /** The owner (`x-service`, `x-strata-service`). */
  service: string;
  /** Undefined when the owner has no handler for it (the owner answers 501 `not-implemented`). */
  handler: HandlerSite | undefined;
}

const HANDLER_OBJECTS = new Set(['handlers', 'publicHandlers', 'tokenHandlers']);

/** The file that binds a service's handlers; it may not exist (a service of the contract nobody has built yet). */
export function handlerFileOf(service: string): string {
  return service === 'gateway' ? 'gateway/src/sigil-edge.ts' : `services/${service}/src/app.ts`;
}

/** Reads a source file; a program's own copy can stand in, so its type checker knows the nodes found. */
export type SourceReader = (absolutePath: string) => ts.SourceFile | undefined;

const parseFile: SourceReader = (absolute) =>
  existsSync(absolute) ? ts.createSourceFile(absolute, readFileSync(absolute, 'utf8'), ts.ScriptTarget.Latest, true) : undefined;

/**
 * The handlers a file binds, by operationId (none when the file does not exist). Every entry must be a plain name: a
 * spread or a computed name would hide an operation from this reader, so it is refused.
 */
export function readHandlers(file: string, root = REPO_ROOT, read: SourceReader = parseFile): Map<string, HandlerSite> {
  const found = new Map<string, HandlerSite>();
  const source = read(path.join(root, file));
  if (!source) return found;
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node): void => {
    const object = handlerObject(node);
    if (object) {
      for (const entry of object.properties) {
        if (!ts.isPropertyAssignment(entry) || !(ts.isIdentifier(entry.name) || ts.isStringLiteral(entry.name))) {
          throw new Error(`${file}:${lineOf(entry)}: list each handler as \`operationId: handler\` (no spread, method or computed name)`);
        }
        const operationId = entry.name.text;
        if (found.has(operationId)) throw new Error(`${file}:${lineOf(entry)}: ${operationId} is bound twice`);
        found.set(operationId, { file, line: lineOf(entry), node: entry.initializer, source });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function handlerObject(node: ts.Node): ts.ObjectLiteralExpression | undefined {
  if (!(ts.isPropertyAssignment(node) || ts.isVariableDeclaration(node))) return undefined;
  if (!ts.isIdentifier(node.name) || !HANDLER_OBJECTS.has(node.name.text)) return undefined;
  return node.initializer && ts.isObjectLiteralExpression(node.initializer) ? node.initializer : undefined;
}

/** Every operation of both contracts, in document order, with the handler its owner binds (if any). */
export function operationIndex(root = REPO_ROOT, read: SourceReader = parseFile): OperationRow[] {
  const operations = [
    ...listOperations(loadSigilOpenApi()).map((op) => ({ contract: 'sigil' as const, operationId: op.operationId, method: op.method, path: op.path, service: op.service as string })),
    ...listStrataOperations(loadStrataOpenApi()).map((op) => ({ contract: 'strata' as const, operationId: op.operationId, method: op.method.toUpperCase(), path: `${STRATA.apiPrefix}${op.path}`, service: op.service as string })),
  ];
  const handlersOf = new Map<string, Map<string, HandlerSite>>();
  for (const service of new Set(operations.map((op) => op.service))) handlersOf.set(service, readHandlers(handlerFileOf(service), root, read));
  for (const [service, handlers] of handlersOf) {
    for (const [operationId, site] of handlers) {
      const owner = operations.find((op) => op.operationId === operationId)?.service;
      if (owner !== service) throw new Error(`${site.file}:${site.line}: ${operationId} is ${owner ? `an operation of ${owner}` : 'no operation of the contracts'}`);
    }
  }
  return operations.map((op) => ({ ...op, handler: handlersOf.get(op.service)?.get(op.operationId) }));
}
