// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).

/* eslint-disable @typescript-eslint/no-explicit-any -- answers are rendered defensively, field by field */

export type Obj = Record<string, any>;

export interface Action {
  message: string;
  kind?: string;
  namespace?: string;
  name?: string;
  link?: string;
}

export interface StrataEvent {
  kind?: string;
  namespace?: string;
  name?: string;
  phase?: string;
  stage?: string;
  message?: string;
  bytes?: number;
  version?: number;
}

export function arr(v: unknown): Obj[] {
  return Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Obj[]) : [];
}

export function nsName(ns: unknown, name: unknown): string {
  if (!name) return '-';
  return ns ? `${String(ns)}/${String(name)}` : String(name);
}

export function action(a: Action): string {
  let out = `${a.message || 'ok'}\n`;
  if (a.link) out += `console: ${a.link}\n`;
  return out;
}
