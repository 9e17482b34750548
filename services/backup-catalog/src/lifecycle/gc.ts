/**
 * Garbage collection of a store: deletes the objects the catalog knows no kept backup or window needs (everything
 * under an expired or failed backup's prefix; expired change-log segments and the reports beside them; partial
 * uploads of a file whose complete upload the catalog has), in batches (`sweepStore`: one DeleteObjects call per
 * 1,000 keys). What the catalog does not know (a backup the mirror has
 * not imported yet, another deployment's files) is never touched, nor is anything written after the pass began.
 * Each batch's segment rows go with their objects, so a pass that stops at an error leaves the catalog consistent.
 */
import { AppError } from '@sigil/kit/errors';
import type { BackupStoreSpec as StoreSpec, BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import { segmentKeyOfSidecar, segmentPreviewsKey } from '@sigil/proto/strata-jobs';
import type { components } from '@sigil/proto/api/strata';
import { createS3Client, sweepStore } from '@strata/stream';
import { BACKUP_PHASES, type BackupDeps } from '../backups/backups.ts';
import { bumpCatalogVersion } from '../db.ts';
import { findPolicy, storeAccess } from '../resources/stores.ts';
import type { StoredResource } from '../resources/resources.ts';

export type GcResult = components['schemas']['GcResult'];

/** Backups whose objects are garbage: expired by retention, or failed runs whose cleanup left something behind. */
const GARBAGE_PHASES = [BACKUP_PHASES.expired, BACKUP_PHASES.failed];

/** What the catalog knows of one store: the targets writing to it, their garbage backups and expired segments. */
interface StoreGarbage {
  /** `<namespace>/<target>/<backup id>` of each backup whose objects may go. */
  backups: Set<string>;
  expiredSegments: Set<string>;
  /** When each expired segment was uploaded. */
  expiredUploadedAt: Map<string, Date>;
  /** Every segment key the catalog has a row for (a partial upload with a row is the catalog's to judge). */
  recorded: Set<string>;
  /** `<namespace>/<target>/wal/<chain>/<WAL file>` of each file with a complete upload: its partial uploads are superseded. */
  completeFiles: Set<string>;
  targets: number;
}

async function knownGarbage(deps: BackupDeps, store: StoredResource<StoreSpec>): Promise<StoreGarbage> {
  const garbage: StoreGarbage = { backups: new Set(), expiredSegments: new Set(), expiredUploadedAt: new Map(), recorded: new Set(), completeFiles: new Set(), targets: 0 };
  for (const target of await deps.resources.list<TargetSpec>(deps.db, 'BackupTarget')) {
    const { namespace, name } = target.metadata;
    const policy = await findPolicy(deps.db, deps.resources, namespace, target.spec.policy);
    if (!policy || policy.spec.store !== store.metadata.name) continue;
    garbage.targets += 1;
    const backups = await deps.db.backup.findMany({ where: { namespace, targetName: name, store: store.metadata.name, phase: { in: GARBAGE_PHASES } }, select: { id: true } });
    for (const backup of backups) garbage.backups.add(`${namespace}/${name}/${backup.id}`);
    const segments = await deps.db.segment.findMany({ where: { namespace, targetName: name }, select: { key: true, expired: true, partial: true, chainId: true, name: true, uploadedAt: true } });
    for (const segment of segments) {
      garbage.recorded.add(segment.key);
      if (segment.expired) {
        garbage.expiredSegments.add(segment.key);
        garbage.expiredUploadedAt.set(segment.key, segment.uploadedAt);
      }
      if (!segment.partial) garbage.completeFiles.add(`${namespace}/${name}/wal/${encodeURIComponent(segment.chainId)}/${segment.name}`);
    }
  }
  return garbage;
}

/** `<root>/<namespace>/<target>/<backup id or "wal">/...`: whether the catalog knows this key as garbage. */
function isGarbage(garbage: StoreGarbage, root: string, key: string): boolean {
  const segment = segmentKeyOfSidecar(key);
  if (garbage.expiredSegments.has(segment)) return true;
  const [namespace, target, folder, chain, file] = key.slice(root.length).split('/');
  if (!namespace || !target || !folder) return false;
  if (folder === 'wal') return isSupersededPartial(garbage, segment, `${namespace}/${target}/wal/${chain}/${(file ?? '').split('.partial.')[0]}`);
  return garbage.backups.has(`${namespace}/${target}/${folder}`);
}

/**
 * A partial upload the catalog no longer records (its row went when the file's complete upload was recorded) while it
 * knows the complete one. After a catalog is lost nothing is recorded yet, so nothing is judged superseded.
 */
function isSupersededPartial(garbage: StoreGarbage, segmentKey: string, file: string): boolean {
  return segmentKey.includes('.partial.') && !garbage.recorded.has(segmentKey) && garbage.completeFiles.has(file);
}

/**
 * An expired segment's row goes once both its objects are gone: the segment and the report beside it. The report is
 * written after the segment, so a pass may find the segment old enough and the report too recent (object times are
 * whole seconds); the row then stays, and the next pass takes the report with it. A row whose objects the listing did
 * not find at all (deleted by an earlier pass) goes when the pass ends.
 */
function expiredRowTracker(deps: BackupDeps, garbage: StoreGarbage, settledBefore: Date) {
  const seen = new Set<string>();
  const gone = new Set<string>();
  const removeRows = async (keys: string[]) => {
    if (keys.length) await deps.db.segment.deleteMany({ where: { key: { in: keys }, expired: true } });
  };
  const segmentOf = segmentKeyOfSidecar;
  /** The segment, its report and its previews: each gone, or not in the store. */
  const bothGone = (segment: string) => [segment, `${segment}.json`, segmentPreviewsKey(segment)].every((key) => gone.has(key) || !seen.has(key));
  return {
    saw(key: string) {
      if (garbage.expiredSegments.has(segmentOf(key))) seen.add(key);
    },
    /** After each batch the store confirmed: a pass that stops keeps every remaining row's objects. */
    async deleted(keys: string[]) {
      const touched = new Set<string>();
      for (const key of keys) {
        const segment = segmentOf(key);
        if (!garbage.expiredSegments.has(segment)) continue;
        gone.add(key);
        touched.add(segment);
      }
      // The report is listed after its segment: once it is gone, the segment went before it (or in an earlier pass).
      await removeRows([...touched].filter((segment) => gone.has(`${segment}.json`) && bothGone(segment)));
    },
    /**
     * Rows whose objects this pass did not find, or whose report was absent (none was written). Only rows recorded well
     * before the pass: a listing may miss what was written while it ran.
     */
    async finish() {
      await removeRows([...garbage.expiredSegments].filter((segment) => (garbage.expiredUploadedAt.get(segment) ?? settledBefore) < settledBefore && bothGone(segment)));
    },
  };
}

export interface GcOptions {
  dryRun: boolean;
  /** Objects this much younger than the pass's start are left for the next pass (clock skew with the store). */
  skewMarginMs: number;
  /** The pass's start as the store's clock reads it; default now (tests pin it to an object's time). */
  startedAt?: Date;
  signal?: AbortSignal;
}

/**
 * One pass over a store. The pass's start is read on the wall clock, not the catalog's (injectable) clock: it is
 * compared with the store's own last-modified times.
 */
export async function collectGarbage(deps: BackupDeps, store: StoredResource<StoreSpec>, options: GcOptions): Promise<GcResult> {
  const { name } = store.metadata;
  if (store.spec.readOnly) throw new AppError('unprocessable', `Store ${name} is read-only: it is never garbage collected.`);
  const startedAt = options.startedAt ?? new Date();
  const access = await storeAccess(deps.db, deps.secrets, store);
  const root = access.prefix ? `${access.prefix.replace(/^\/+|\/+$/g, '')}/` : '';
  const garbage = await knownGarbage(deps, store);
  const rows = expiredRowTracker(deps, garbage, new Date(startedAt.getTime() - options.skewMarginMs));
  const swept = await sweepStore({
    client: createS3Client(access),
    bucket: access.bucket,
    prefix: root,
    ...(root ? {} : { wholeBucket: true }),
    isNeeded: (key) => {
      rows.saw(key);
      return !isGarbage(garbage, root, key);
    },
    passStartedAt: startedAt,
    skewMarginMs: options.skewMarginMs,
    dryRun: options.dryRun,
    ...(options.signal ? { signal: options.signal } : {}),
    onBatch: ({ keys }) => rows.deleted(keys),
  });
  if (!options.dryRun && !swept.error) await rows.finish();
  const result: GcResult = {
    store: name,
    dryRun: options.dryRun,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    objects: swept.objects,
    bytes: swept.bytes,
    keys: swept.keys,
    truncated: swept.truncated,
    kept: swept.kept,
    waiting: swept.recent,
    ...(swept.error ? { error: swept.error } : {}),
  };
  await recordPass(deps, store, result);
  return result;
}

/** The pass in the store's status (`lastGC`, and the spec's `lastGCTime`/`lastGCDeleted` for a real pass) and on the event stream. */
async function recordPass(deps: BackupDeps, store: StoredResource<StoreSpec>, result: GcResult): Promise<void> {
  const { namespace, name } = store.metadata;
  const lastGC = { at: result.finishedAt ?? result.startedAt, objects: result.objects, bytes: result.bytes, dryRun: result.dryRun, waiting: result.waiting ?? 0, ...(result.error ? { error: result.error } : {}) };
  const version = await deps.db.$transaction(async (tx) => {
    await deps.resources.updateStatus(tx, 'BackupStore', namespace, name, (current) => ({
      ...current.status,
      lastGC,
      // The pass's start: whatever expired while it ran is after it, so the next pass is due at once.
      ...(result.dryRun ? {} : { lastGCTime: result.startedAt, lastGCDeleted: result.objects, lastGCWaiting: result.waiting ?? 0 }),
    }));
    return await bumpCatalogVersion(tx);
  });
  const what = `${result.objects} object(s), ${result.bytes} bytes`;
  deps.notify({
    kind: 'catalog',
    namespace,
    name,
    phase: result.error ? 'Failed' : 'Succeeded',
    stage: result.dryRun ? 'gc-dry-run' : 'gc',
    message: result.dryRun ? `garbage collection (dry run) of store ${name} would delete ${what}` : `garbage collection of store ${name} deleted ${what}${result.error ? `, then stopped: ${result.error}` : ''}`,
    bytes: result.bytes,
    version: Number(version),
  });
}
