/**
 * What an answer carries: a copy of the stored object (later changes never reach an answer already given), with the
 * ids named by `expand` (`default_payment_method`, `invoice_settings.default_payment_method`, `data.product`)
 * replaced by the objects they name, as the real API does. A path through a list's `data` applies to each element.
 */
import type { StoredObject } from './objects.ts';

type Lookup = (id: string) => StoredObject | undefined;

export function present<T extends object>(object: T, expand: readonly string[], lookup: Lookup): T {
  const copy = structuredClone(object);
  for (const path of expand) expandPath(copy, path.split('.'), lookup);
  return copy;
}

function expandPath(target: unknown, segments: readonly string[], lookup: Lookup): void {
  const [head, ...rest] = segments;
  if (head === undefined || target === null || typeof target !== 'object') return;
  const record = target as Record<string, unknown>;
  const value = record[head];
  if (rest.length === 0) {
    const found = typeof value === 'string' ? lookup(value) : undefined;
    if (found) record[head] = structuredClone(found);
    return;
  }
  if (Array.isArray(value)) for (const element of value) expandPath(element, rest, lookup);
  else expandPath(value, rest, lookup);
}
