// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import type { Schema } from '@strata/client';
import { keyValues, list, table } from '../format.ts';
import { nsName } from './common.ts';

export function whoami(w: Schema<'Whoami'>): string {
  const p = w.principal;
  return keyValues([
    ['email', p.email],
    ['id', p.id],
    ['role', p.role],
    ['service', p.service ? true : undefined],
    ['groups', p.groups?.length ? list(p.groups) : undefined],
    ['orgs', p.orgs?.length ? list(p.orgs) : undefined],
    ['projects', p.projects?.length ? list(p.projects) : undefined],
    ['console', w.externalURL],
    ['version', w.version],
  ]);
}

export function settings(s: Schema<'Settings'>): string {
  const c = s.catalog;
  let out = keyValues([
    ['version', s.version],
    ['catalog', `${c.targets ?? 0} targets, ${c.backups ?? 0} backups (catalog version ${c.version ?? 0})`],
  ]);
  out += `\nStores:\n`;
  out += s.stores.length
    ? table(
        ['name', 'endpoint', 'region', 'bucket', 'prefix', 'phase', 'read-only', 'message'],
        s.stores.map((x) => [x.name, x.endpoint, x.region, x.bucket, x.prefix, x.phase, x.readOnly ?? false, x.message]),
      )
    : '  (none)\n';
  out += `\nPolicies:\n`;
  out += s.policies.length
    ? table(
        ['policy', 'store', 'schedule', 'retention', 'pitr', 'verify'],
        s.policies.map((x) => [nsName(x.namespace, x.name), x.store, x.schedule, x.retention, x.pitr ?? false, x.verify]),
      )
    : '  (none)\n';
  return out;
}
