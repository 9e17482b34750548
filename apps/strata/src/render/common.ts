// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import type { Schema } from '@strata/client';

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

/** A target as `namespace/name` in every output, whether the API wrote `name` (with the namespace apart) or both. */
export function targetRef(namespace: string | undefined, target: string | undefined): string {
  if (!target) return '-';
  return target.includes('/') ? target : nsName(namespace || 'default', target);
}

/** The API's console links are relative (`/restores/ns/name`): printed against the server the CLI talks to. */
export function consoleLink(server: string | undefined, link: string): string {
  if (!server || /^[a-z][a-z0-9+.-]*:/i.test(link)) return link;
  return `${server}${link.startsWith('/') ? '' : '/'}${link}`;
}

export function action(a: Action, server?: string): string {
  let out = `${a.message || 'ok'}\n`;
  if (a.link) out += `console: ${consoleLink(server, a.link)}\n`;
  return out;
}
