// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import { list, table } from '../format.ts';
import type { Obj } from './common.ts';
import { arr, nsName } from './common.ts';

export function applyItems(r: unknown): Obj[] {
  if (Array.isArray(r)) return arr(r);
  if (!r || typeof r !== 'object') return [];
  const o = r as Obj;
  for (const key of ['results', 'items', 'applied', 'resources']) {
    if (Array.isArray(o[key])) return arr(o[key]);
  }
  const first = Object.values(o).find((v) => Array.isArray(v));
  return arr(first);
}

export function applyResult(r: unknown): string {
  return applyItems(r)
    .map((i) => `${String(i.kind ?? 'resource').toLowerCase()}/${nsName(i.namespace ?? i.metadata?.namespace, i.name ?? i.metadata?.name)} ${i.action ?? 'applied'}\n`)
    .join('');
}

export function listOf(r: unknown, keys: string[]): Obj[] {
  if (Array.isArray(r)) return arr(r);
  if (!r || typeof r !== 'object') return [];
  for (const key of keys) if (Array.isArray((r as Obj)[key])) return arr((r as Obj)[key]);
  return [];
}

export function resources(r: unknown): string {
  const items = listOf(r, ['resources', 'items']);
  if (!items.length) return 'No resources.\n';
  return table(
    ['kind', 'name', 'phase', 'message'],
    items.map((i) => [
      i.kind,
      nsName(i.metadata?.namespace ?? i.namespace, i.metadata?.name ?? i.name),
      i.status?.phase ?? i.phase,
      i.status?.message ?? i.message,
    ]),
  );
}

export function secrets(r: unknown): string {
  const items = listOf(r, ['secrets', 'items']);
  if (!items.length) return 'No secrets.\n';
  return table(
    ['secret', 'keys'],
    items.map((s) => [
      nsName(s.namespace ?? s.metadata?.namespace, s.name ?? s.metadata?.name),
      list(Array.isArray(s.keys) ? s.keys : s.data && typeof s.data === 'object' ? Object.keys(s.data) : undefined),
    ]),
  );
}
