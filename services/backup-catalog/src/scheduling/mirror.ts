import { isManifestKey, isSegmentReportKey, pinKeyOfManifest, segmentKeyOfReport, type StoredPin, type StrataReports } from '@sigil/proto/strata-jobs';
import { assertStrataReportData } from '@sigil/proto/strata-wire';
import { createS3Client, ensureBucket, listKeys, downloadStream, readSmall, type S3Client } from '@strata/stream';
import { BACKUP_PHASES, type BackupDeps } from '../backups/backups.ts';
import { CONDITION, withConditions, type ConditionInput } from '../resources/conditions.ts';
import { bumpCatalogVersion, type Db } from '../db.ts';
import type { BackupStoreSpec as StoreSpec, BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import { recordSegment, refreshChain } from '../change-capture/segments.ts';
import { findPolicy, storeAccess } from '../resources/stores.ts';
import type { StoredResource } from '../resources/resources.ts';

interface MirroredManifest {
  id?: string;
  engine?: string;
  policy?: string;
  reason?: string;
  target?: { namespace?: string; name?: string };
  startedAt?: string;
  completedAt?: string;
  stats?: { rawBytes?: number; storedBytes?: number };
}

/**
 * Mirrors every backup and change-log segment found in each store into the catalog's records: after the catalog
 * database is lost, the next pass brings them back. Also checks each store (writable stores get their bucket
 * created) and records the outcome in the store's Mirrored condition.
 */
export async function mirrorStores(deps: BackupDeps): Promise<number> {
  let created = 0;
  for (const store of await deps.resources.list<StoreSpec>(deps.db, 'BackupStore')) {
    created += await mirrorStore(deps, store);
  }
  return created;
}

export async function mirrorStore(deps: BackupDeps, store: StoredResource<StoreSpec>): Promise<number> {
  const { name } = store.metadata;
  const importedAt = deps.clock().toISOString();
  try {
    const access = await storeAccess(deps.db, deps.secrets, store);
    const client = createS3Client(access);
    if (!store.spec.readOnly) await ensureBucket(client, access.bucket, access.region);
    const known = new Set((await deps.db.backup.findMany({ select: { id: true } })).map((b) => b.id));
    const prefix = access.prefix ? `${access.prefix.replace(/\/+$/, '')}/` : '';
    let created = 0;
    const stored = new Set<string>();
    const segmentReports: string[] = [];
    const manifests: string[] = [];
    for await (const key of listKeys(client, access.bucket, prefix)) {
      stored.add(key);
      if (isSegmentReportKey(key)) segmentReports.push(key);
      if (isManifestKey(key)) manifests.push(key);
    }
    // After the listing: a backup's pin.json sorts after its manifest.json, and the import reads it.
    for (const key of manifests) {
      const id = key.split('/').at(-2) ?? '';
      if (!id || known.has(id)) continue;
      const manifest = JSON.parse((await readSmall(await downloadStream(client, access.bucket, key))).toString('utf8')) as MirroredManifest;
      if (manifest.id !== id || !manifest.target?.name) continue;
      const started = manifest.startedAt ? new Date(manifest.startedAt) : deps.clock();
      const pin = stored.has(pinKeyOfManifest(key)) ? await readPin(client, access.bucket, pinKeyOfManifest(key), id) : undefined;
      await deps.db.$transaction(async (tx) => {
        await tx.backup.create({
          data: {
            id,
            namespace: manifest.target?.namespace ?? 'default',
            name: `${manifest.target?.name}-${id}`.slice(0, 253),
            targetName: manifest.target?.name ?? '',
            store: name,
            policy: manifest.policy ?? '',
            engine: manifest.engine ?? '',
            phase: BACKUP_PHASES.succeeded,
            reason: manifest.reason ?? '',
            mirrored: true,
            queuedAt: started,
            startedAt: started,
            completedAt: manifest.completedAt ? new Date(manifest.completedAt) : started,
            manifestKey: key,
            manifest: manifest as never,
            rawBytes: BigInt(Math.round(manifest.stats?.rawBytes ?? 0)),
            storedBytes: BigInt(Math.round(manifest.stats?.storedBytes ?? 0)),
            ...(pin ? { pinned: true, pinReason: pin.reason, pinnedBy: pin.by, pinExpires: pin.expires ? new Date(pin.expires) : null } : {}),
          },
        });
        await bumpCatalogVersion(tx);
      });
      known.add(id);
      created += 1;
    }
    const segments = await importSegments(deps, client, access.bucket, stored, segmentReports);
    const missing = await checkSegments(deps, store, stored);
    const unread = segments.unreadable.length ? `; ${segments.unreadable.length} segment report(s) could not be read (${segments.unreadable.slice(0, 3).join(', ')}${segments.unreadable.length > 3 ? ', …' : ''}): the next pass tries them again` : '';
    await recordMirror(deps, store, { type: CONDITION.mirrored, status: 'True', reason: 'Mirrored', message: `the last pass imported ${created} backup(s)${segments.imported ? ` and ${segments.imported} change-log segment(s)` : ''}${missing ? `; ${missing} change-log segment(s) are missing from the store` : ''}${unread}` }, {
      lastImportTime: importedAt,
      lastImportCreated: created,
    });
    return created;
  } catch (error) {
    await recordMirror(deps, store, { type: CONDITION.mirrored, status: 'False', reason: 'MirrorFailed', message: (error as Error).message }, {});
    return 0;
  }
}

/** A backup's pin record, when it is one (for this backup, with a valid time); anything else is ignored. */
async function readPin(client: S3Client, bucket: string, key: string, backupId: string): Promise<StoredPin | undefined> {
  const pin = JSON.parse((await readSmall(await downloadStream(client, bucket, key))).toString('utf8')) as Partial<StoredPin>;
  if (pin.v !== 1 || pin.backup !== backupId) return undefined;
  if (pin.expires !== null && (typeof pin.expires !== 'string' || Number.isNaN(Date.parse(pin.expires)))) return undefined;
  return { v: 1, backup: backupId, reason: typeof pin.reason === 'string' ? pin.reason : '', by: typeof pin.by === 'string' ? pin.by : '', expires: pin.expires, at: typeof pin.at === 'string' ? pin.at : '' };
}

/**
 * Records the segments the store holds and the catalog does not know, from the report kept beside each (the mover
 * writes it before reporting): after the catalog database is lost, the change-capture windows come back with the
 * backups. Oldest first, so a finished segment replaces its partial uploads as it did when reported; a partial whose
 * finished segment is known is left out.
 */
async function importSegments(deps: BackupDeps, client: S3Client, bucket: string, stored: Set<string>, reportKeys: string[]): Promise<{ imported: number; unreadable: string[] }> {
  const known = await recordedSegmentKeys(deps.db);
  const unknown = reportKeys.filter((key) => stored.has(segmentKeyOfReport(key)) && !known.has(segmentKeyOfReport(key)));
  const unreadable: string[] = [];
  if (unknown.length === 0) return { imported: 0, unreadable };
  const reports: Array<StrataReports['segment.uploaded']> = [];
  for (const key of unknown) {
    // A streamer keeps writing while the pass runs: a partial upload listed a moment ago may be superseded and gone,
    // or a report not yet whole. One report that cannot be read is left for the next pass, not the end of this one.
    const data = await readSegmentReport(client, bucket, key).catch(() => undefined);
    if (data === undefined) unreadable.push(key);
    else if (data.segment.key === segmentKeyOfReport(key)) reports.push(data);
  }
  const finished = await deps.db.segment.findMany({ where: { partial: false }, select: { namespace: true, targetName: true, timeline: true, name: true } });
  const fileOf = (namespace: string, target: string, timeline: number, name: string) => `${namespace}/${target}/${timeline}/${name}`;
  const done = new Set([...finished.map((f) => fileOf(f.namespace, f.targetName, f.timeline, f.name)), ...reports.filter((r) => !r.segment.partial).map((r) => fileOf(r.namespace, r.name, r.segment.timeline, r.segment.name))]);
  let imported = 0;
  for (const report of reports.sort((a, b) => a.segment.uploadedAt.localeCompare(b.segment.uploadedAt))) {
    if (report.segment.partial && done.has(fileOf(report.namespace, report.name, report.segment.timeline, report.segment.name))) continue;
    await deps.db.$transaction((tx) => recordSegment(deps, tx, report));
    imported += 1;
  }
  return { imported, unreadable };
}

async function readSegmentReport(client: S3Client, bucket: string, key: string): Promise<StrataReports['segment.uploaded']> {
  const data: unknown = JSON.parse((await readSmall(await downloadStream(client, bucket, key))).toString('utf8'));
  assertStrataReportData('segment.uploaded', data);
  return data;
}

/** A segment uploaded this long ago must be listed; a younger one may still be on its way. */
const SEGMENT_GRACE_MS = 60_000;

/**
 * Marks the recorded segments of the targets writing to this store that the listing did not find (and those found
 * again); each affected target's chain is computed anew, so a deleted segment shows as a broken chain.
 */
async function checkSegments(deps: BackupDeps, store: StoredResource<StoreSpec>, stored: Set<string>): Promise<number> {
  const before = new Date(deps.clock().getTime() - SEGMENT_GRACE_MS);
  let missing = 0;
  for (const target of await deps.resources.list<TargetSpec>(deps.db, 'BackupTarget')) {
    const { namespace, name } = target.metadata;
    const policy = await findPolicy(deps.db, deps.resources, namespace, target.spec.policy);
    if (!policy || policy.spec.store !== store.metadata.name) continue;
    // An expired segment's object is garbage collected on purpose: its absence breaks nothing.
    const rows = await segmentKeysUploadedBefore(deps.db, namespace, name, before);
    const gone = rows.filter((r) => !stored.has(r.key)).map((r) => r.key);
    const back = rows.filter((r) => r.missing && stored.has(r.key)).map((r) => r.key);
    missing += gone.length;
    if (gone.length === 0 && back.length === 0 && !rows.some((r) => r.missing)) continue;
    await deps.db.$transaction(async (tx) => {
      if (gone.length) await tx.segment.updateMany({ where: { key: { in: gone } }, data: { missing: true } });
      if (back.length) await tx.segment.updateMany({ where: { key: { in: back } }, data: { missing: false } });
      const fresh = await deps.resources.get<TargetSpec>(tx, 'BackupTarget', namespace, name);
      if (fresh) await refreshChain(tx, deps.resources, fresh);
      await bumpCatalogVersion(tx);
    });
  }
  return missing;
}

/**
 * Every recorded segment key. A catalog holds tens of thousands: the database sends them as one text, which costs a
 * fraction of Prisma's row objects (this runs every few minutes).
 */
async function recordedSegmentKeys(db: Db): Promise<Set<string>> {
  const [{ keys } = { keys: null }] = await db.$queryRawUnsafe<Array<{ keys: string | null }>>(`SELECT string_agg(key, E'\n') AS keys FROM segments`);
  return new Set(keys ? keys.split('\n') : []);
}

/** A target's segments (not expired) uploaded before a time: their keys, and whether each is marked missing. */
async function segmentKeysUploadedBefore(db: Db, namespace: string, targetName: string, before: Date): Promise<Array<{ key: string; missing: boolean }>> {
  const [{ rows } = { rows: null }] = await db.$queryRawUnsafe<Array<{ rows: string | null }>>(
    `SELECT string_agg(missing::int || key, E'\n') AS rows FROM segments WHERE namespace = $1 AND target_name = $2 AND NOT expired AND uploaded_at < $3::timestamptz`,
    namespace, targetName, before,
  );
  return rows ? rows.split('\n').map((row) => ({ key: row.slice(1), missing: row.startsWith('1') })) : [];
}

/** The mirror's outcome as the store's Mirrored condition; Ready stays the status writer's (it checks the bucket). */
async function recordMirror(deps: BackupDeps, store: StoredResource<StoreSpec>, condition: ConditionInput, fields: Record<string, unknown>): Promise<void> {
  const { namespace, name } = store.metadata;
  await deps.resources.updateStatus(deps.db, 'BackupStore', namespace, name, (current) =>
    withConditions({ ...current.status, ...fields }, [condition], current.metadata.generation, deps.clock()),
  );
}

