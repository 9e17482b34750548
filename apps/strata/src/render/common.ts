// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import type { Schema } from '../client.ts';

/** The answer of a write. */
export type Action = Schema<'ActionResult'>;

export function nsName(ns: string | undefined, name: string | undefined): string {
  if (!name) return '-';
  return ns ? `${ns}/${name}` : name;
}

/** A string member of a free-form object of the document (`metadata`, `status`), else undefined. */
export function textOf(o: Record<string, unknown> | undefined, key: string): string | undefined {
  const v = o?.[key];
  return typeof v === 'string' ? v : undefined;
}

export function action(a: Action): string {
  let out = `${a.message || 'ok'}\n`;
  if (a.link) out += `console: ${a.link}\n`;
  return out;
}
