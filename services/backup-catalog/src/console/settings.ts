import { STRATA } from '@sigil/proto/strata';
import type { BackupPolicySpec, BackupStoreSpec } from '@sigil/proto/resources';
import { BACKUP_PHASES } from '../backups/backups.ts';
import { catalogVersion, type Db } from '../db.ts';
import type { ResourceRepository } from '../resources/resources.ts';

interface LastGC {
  at: string;
  objects: number;
  bytes: number;
  dryRun: boolean;
  waiting?: number;
}

const lastGCView = ({ at, objects, bytes, dryRun, waiting = 0 }: LastGC) => ({ at, objects, bytes, dryRun, waiting });

/** The console's settings page: stores and policies without secrets, and the catalog's size and version. */
export async function readSettings(db: Db, resources: ResourceRepository) {
  const [stores, policies, version, targetCount, backupCount] = await Promise.all([
    resources.list<BackupStoreSpec>(db, 'BackupStore'),
    resources.list<BackupPolicySpec>(db, 'BackupPolicy'),
    catalogVersion(db),
    db.resource.count({ where: { kind: 'BackupTarget' } }),
    db.backup.count({ where: { phase: BACKUP_PHASES.succeeded } }),
  ]);
  return {
    stores: stores.map((s) => ({
      name: s.metadata.name,
      endpoint: s.spec.s3.endpoint,
      region: s.spec.s3.region,
      bucket: s.spec.s3.bucket,
      prefix: s.spec.prefix ?? '',
      phase: String(s.status.phase ?? 'Pending'),
      message: String(s.status.message ?? ''),
      readOnly: s.spec.readOnly ?? false,
      ...(s.status.lastGC ? { lastGC: lastGCView(s.status.lastGC as LastGC) } : {}),
    })),
    policies: policies.map((p) => ({
      namespace: p.metadata.namespace,
      name: p.metadata.name,
      store: p.spec.store,
      schedule: p.spec.full.schedule,
      verify: p.spec.verify?.schedule ?? '',
      retention: Object.entries(p.spec.retain ?? {}).map(([k, v]) => `${k}=${v}`).join(' '),
      pitr: p.spec.pitr?.enabled ?? false,
    })),
    version: STRATA.version,
    catalog: { targets: targetCount, backups: backupCount, version: Number(version) },
  };
}
