/**
 * The patch formats the API server accepts, applied to a JSON object: JSON Patch (RFC 6902), JSON Merge Patch
 * (RFC 7386), and strategic merge patch and server-side apply approximated as a merge patch (lists are replaced
 * whole; no merge keys, no `$patch` directives, no field managers).
 */
import { isDeepStrictEqual } from 'node:util';

type Json = unknown;
type Container = Record<string, Json> | Json[];

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

const isObject = (value: Json): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

export class PatchError extends Error {}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchError(`invalid JSON pointer "${path}"`);
  return path.slice(1).split('/').map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The container holding the pointed-at value, and the key or index in it. */
function locate(document: Json, path: string): { parent: Container; key: string } {
  const tokens = pointer(path);
  const key = tokens.pop();
  if (key === undefined) throw new PatchError('the whole document cannot be the target of an operation');
  let parent: Json = document;
  for (const token of tokens) {
    parent = Array.isArray(parent) ? parent[Number(token)] : isObject(parent) ? parent[token] : undefined;
    if (parent === undefined) throw new PatchError(`missing path "${path}"`);
  }
  if (!Array.isArray(parent) && !isObject(parent)) throw new PatchError(`missing path "${path}"`);
  return { parent, key };
}

function read(document: Json, path: string): Json {
  const { parent, key } = locate(document, path);
  const value = Array.isArray(parent) ? parent[Number(key)] : parent[key];
  if (value === undefined) throw new PatchError(`missing value at "${path}"`);
  return value;
}

function arrayIndex(list: Json[], key: string, forAdd: boolean): number {
  const index = key === '-' && forAdd ? list.length : Number(key);
  if (!/^(0|[1-9][0-9]*)$/.test(key) && !(key === '-' && forAdd)) throw new PatchError(`invalid array index "${key}"`);
  if (index < 0 || index > list.length - (forAdd ? 0 : 1)) throw new PatchError(`array index ${key} out of bounds`);
  return index;
}

function add(document: Json, path: string, value: Json): void {
  const { parent, key } = locate(document, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true), 0, structuredClone(value));
  else parent[key] = structuredClone(value);
}

function remove(document: Json, path: string): void {
  const { parent, key } = locate(document, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, false), 1);
  else if (key in parent) delete parent[key];
  else throw new PatchError(`missing value at "${path}"`);
}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

export function jsonPatch(target: Json, operations: Json): Json {
  if (!Array.isArray(operations)) throw new PatchError('a JSON patch is a list of operations');
  const document = { root: structuredClone(target) };
  const at = (path: string) => `/root${path}`;
  for (const operation of operations as Operation[]) {
    switch (operation.op) {
      case 'add': add(document, at(operation.path), operation.value); break;
      case 'remove': remove(document, at(operation.path)); break;
      case 'replace': read(document, at(operation.path)); remove(document, at(operation.path)); add(document, at(operation.path), operation.value); break;
      case 'move': { const value = read(document, at(operation.from ?? '')); remove(document, at(operation.from ?? '')); add(document, at(operation.path), value); break; }
      case 'copy': add(document, at(operation.path), read(document, at(operation.from ?? ''))); break;
      case 'test': if (!isDeepStrictEqual(read(document, at(operation.path)), operation.value)) throw new PatchError(`testing value ${operation.path} failed`); break;
      default: throw new PatchError(`unexpected kind: ${String(operation.op)}`);
    }
  }
  return document.root;
}

/** Applies a patch body of the given content type; undefined for a content type the API server would refuse. */
export function applyPatch(contentType: string, target: Json, patch: Json): Json | undefined {
  switch (contentType) {
    case PATCH_TYPES.json: return jsonPatch(target, patch);
    case PATCH_TYPES.merge:
    case PATCH_TYPES.strategic:
    case PATCH_TYPES.apply: return mergePatch(target, patch);
    default: return undefined;
  }
}
