// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import type { Schema } from '@strata/client';
import { list, table } from '../format.ts';
import { nsName, textOf } from './common.ts';

/** One line per applied resource, then one per warning (a name that points nowhere is applied, never silent). */
export function applyResult(r: Schema<'ApplyResult'>): string {
  const applied = r.applied.map((i) => `${i.kind.toLowerCase()}/${nsName(i.namespace, i.name)} ${i.action}\n`);
  const warnings = (r.warnings ?? []).map((w) => `warning: ${w.kind} ${nsName(w.namespace, w.name)}: ${w.path ? `${w.path}: ` : ''}${w.message}\n`);
  return [...applied, ...warnings].join('');
}

export function resources(r: Schema<'ResourceList'>): string {
  if (!r.resources.length) return 'No resources.\n';
  return table(
    ['kind', 'name', 'phase', 'message'],
    r.resources.map((i) => [
      i.kind,
      nsName(textOf(i.metadata, 'namespace'), textOf(i.metadata, 'name')),
      textOf(i.status, 'phase'),
      textOf(i.status, 'message'),
    ]),
  );
}

export function secrets(r: Schema<'SecretList'>): string {
  if (!r.secrets.length) return 'No secrets.\n';
  return table(
    ['secret', 'keys'],
    r.secrets.map((s) => [nsName(s.namespace, s.name), list(s.keys)]),
  );
}
