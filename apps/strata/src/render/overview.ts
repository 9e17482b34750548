// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import { keyValues, list, table } from '../format.ts';
import type { Obj } from './common.ts';
import { arr, nsName } from './common.ts';

export function whoami(w: Obj): string {
  const p: Obj = w.principal ?? {};
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

export function settings(s: Obj): string {
  const c: Obj = s.catalog ?? {};
  let out = keyValues([
    ['version', s.version],
    ['catalog', `${c.targets ?? 0} targets, ${c.backups ?? 0} backups (catalog version ${c.version ?? 0})`],
  ]);
  const stores = arr(s.stores);
  out += `\nStores:\n`;
  out += stores.length
    ? table(
        ['name', 'endpoint', 'region', 'bucket', 'prefix', 'phase', 'read-only', 'message'],
        stores.map((x) => [x.name, x.endpoint, x.region, x.bucket, x.prefix, x.phase, x.readOnly ?? false, x.message]),
      )
    : '  (none)\n';
  const policies = arr(s.policies);
  out += `\nPolicies:\n`;
  out += policies.length
    ? table(
        ['policy', 'store', 'schedule', 'retention', 'pitr', 'verify'],
        policies.map((x) => [nsName(x.namespace, x.name), x.store, x.schedule, x.retention, x.pitr ?? false, x.verify]),
      )
    : '  (none)\n';
  return out;
}
