import { AppError } from '@sigil/kit/errors';
import { parseDuration, parseQuantity } from '@sigil/proto/units';
import { restoredDatabaseNames, type RestoreJob, type SegmentObject } from '@sigil/proto/strata-jobs';
import { roleAtLeast, type StrataPrincipal } from '@sigil/proto/strata';
import { createS3Client, presignGet } from '@strata/stream';
import { BACKUP_PHASES, enqueueJob, newRunId, type BackupDeps, type BackupRow } from './backups.ts';
import { bumpCatalogVersion, type Tx } from './db.ts';
import type { BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import { DEFAULT_ENGINE_PORTS as DEFAULT_PORTS } from '@sigil/proto/strata';
import { loadTargetBundle, storeAccess, storeIdentity, type TargetBundle } from './stores.ts';
import { planFor, type RestorePlan } from './plans.ts';
import { checksFor, DEFAULT_VERIFY_CHECKS } from './restore-checks.ts';
import { createInPlaceRestores } from './in-place.ts';
import { writeBinlogBundle, writeRecoveryBundle } from './recovery-bundle.ts';
import { restoreView, type RestoreRow } from './views.ts';
import type { ConsoleEvent } from './events.ts';

/** RestoreRequest of the console API (spec 2.1). */
export interface RestoreRequest {
  target: string;
  backupID?: string;
  at?: string;
  mode: 'sandbox' | 'new' | 'in-place' | 'download';
  database?: string;
  host?: string;
  port?: number;
  expose?: boolean;
  tables?: string[];
  ttl?: string;
  confirm?: string;
  credentialsSecret?: string;
  skipSafetyBackup?: boolean;
  reason?: string;
  /** Checks to run on what was restored (built-in names or the target's check names); `runChecks` alone runs the defaults. */
  checks?: string[];
  runChecks?: boolean;
}

export interface RestoreDeps extends BackupDeps {
  downloadTtlSeconds: number;
}

interface ManifestObject {
  key: string;
  sha256: string;
  role: string;
  database?: string;
  compression?: string;
  size?: number;
}

/** Restore phases: Running (handed to a mover), Succeeded, Failed. A download succeeds at once. */
export function createRestoreService(deps: RestoreDeps) {
  const { db, resources } = deps;
  const inPlace = createInPlaceRestores(deps);

  async function create(tx: Tx, principal: StrataPrincipal, request: RestoreRequest, named?: { namespace: string; name: string }): Promise<{ row: RestoreRow; version: bigint }> {
    const [targetNamespace, targetName] = splitTarget(request.target, named?.namespace);
    checkRequest(request);
    if (request.mode === 'in-place') {
      if (!roleAtLeast(principal.role, 'restorer-admin')) throw new AppError('forbidden', `An in-place restore needs the role restorer-admin; you are ${principal.role}.`);
      if (request.confirm !== targetName) throw new AppError('validation-failed', `confirm: must equal the target name ${targetName} for an in-place restore`);
      const row = await inPlace.create(tx, principal, request, { namespace: named?.namespace ?? targetNamespace, ...(named?.name ? { name: named.name } : {}) });
      return { row, version: await bumpCatalogVersion(tx) };
    }
    if (request.mode === 'sandbox') throw new AppError('not-restorable', 'A Restore document in mode sandbox is not applied in this release; POST /api/v1/restores or /api/v1/sandboxes creates one.');
    const bundle = await loadTargetBundle(tx, resources, targetNamespace, targetName);
    const { backup, plan } = await chooseBackup(resources, tx, bundle, request);
    const manifest = (backup.manifest ?? {}) as { objects?: ManifestObject[]; databases?: string[]; mode?: string };
    const physical = manifest.mode === 'physical';
    const dataObjects = (manifest.objects ?? []).filter((o) => o.role === 'data');
    const segments = segmentsOf(plan);
    const planRef = planRefOf(backup, plan);
    refuseTablesWithBinlogs(bundle.target.spec as TargetSpec, request.tables, segments.length);
    const now = deps.clock();
    const id = newRunId(now);
    const namespace = named?.namespace ?? targetNamespace;
    const name = named?.name ?? `${targetName}-restore-${id}`.slice(0, 253);
    if (await tx.restore.findUnique({ where: { namespace_name: { namespace, name } } })) {
      throw new AppError('conflict', `Restore ${namespace}/${name} already exists.`);
    }
    const base = {
      id, namespace, name, targetNamespace, targetName, backupId: backup.id, mode: request.mode,
      reason: request.reason ?? '', requestedBy: principal.email || principal.id,
      ...(planRef ? { plan: planRef } : {}),
    };
    let row: RestoreRow;
    const ready = (downloadUrl: string, message: string, database: string) =>
      tx.restore.create({
        data: { ...base, phase: 'Succeeded', message, destination: { mode: 'download', database }, downloadUrl, downloadExpires: new Date(now.getTime() + deps.downloadTtlSeconds * 1000), startedAt: now, completedAt: now },
      });
    const where = { namespace: targetNamespace, target: targetName, restoreId: id };
    if (request.mode === 'download' && physical) {
      const access = await storeAccess(tx, deps.secrets, bundle.store);
      const url = await writeRecoveryBundle(createS3Client(access), access.bucket, { prefix: access.prefix, ...where }, {
        base: dataObjects[0] as ManifestObject, segments, recoverTo: plan?.recoverTo, major: (manifest as { server?: { major?: number } }).server?.major, ttlSeconds: deps.downloadTtlSeconds,
      });
      row = await ready(url, `Recovery bundle of backup ${backup.id}${segments.length ? ` with ${segments.length} WAL segments` : ''}${plan?.targetTime ? ` to ${plan.targetTime}` : ''}: the URL is a README with the links and the commands to recover by hand`, '');
    } else if (request.mode === 'download' && segments.length) {
      const object = pickObject(dataObjects, request.database);
      const access = await storeAccess(tx, deps.secrets, bundle.store);
      const startPosition = (manifest as { position?: { binlogPos?: number } }).position?.binlogPos ?? 4;
      const url = await writeBinlogBundle(createS3Client(access), access.bucket, { prefix: access.prefix, ...where }, { dump: object, segments, startPosition, recoverTo: plan?.recoverTo, ttlSeconds: deps.downloadTtlSeconds });
      row = await ready(url, `Point-in-time bundle of ${object.database ?? 'the backup'} from backup ${backup.id} with ${segments.length} binlogs${plan?.targetTime ? ` to ${plan.targetTime}` : ''}: the URL is a README with the links and the commands to replay by hand`, object.database ?? '');
    } else if (request.mode === 'download') {
      const object = pickObject(dataObjects, request.database);
      const client = createS3Client(await storeAccess(tx, deps.secrets, bundle.store));
      const url = await presignGet(client, bundle.store.spec.s3.bucket, object.key, deps.downloadTtlSeconds);
      row = await ready(url, `Encrypted artifact of ${object.database ?? 'the backup'} (sha256 ${object.sha256}); decrypt with: age -d -i IDENTITY | ${object.compression === 'zstd' ? 'zstd -d' : 'cat'}`, object.database ?? '');
    } else {
      if (!request.host || !request.database || !request.credentialsSecret) throw new Error('checked by checkRequest');
      const engine = (bundle.target.spec as TargetSpec).engine;
      const [secretNamespace, secretName] = splitTarget(request.credentialsSecret, namespace);
      const username = await deps.secrets.resolve(tx, { namespace: secretNamespace, name: secretName, key: 'username' });
      const password = await deps.secrets.resolve(tx, { namespace: secretNamespace, name: secretName, key: 'password', optional: true });
      const databases = databasesOf(manifest);
      const job = await restoreJob(deps, tx, { bundle, backup, plan, id, namespace, name }, {
        destination: { engine, host: request.host, port: request.port ?? DEFAULT_PORTS[engine], username: username ?? '', password: password ?? '', database: request.database },
        databases,
        checks: requestedChecks(request, bundle.policy.spec.verify?.checks),
        ...(request.tables?.length ? { tables: request.tables } : {}),
      });
      row = await tx.restore.create({
        data: {
          ...base,
          phase: 'Running',
          message: plan ? `handed to a mover; ${planMessage(plan)}` : 'handed to a mover',
          destination: {
            mode: 'new',
            host: `${request.host}:${job.destination.port}`,
            database: request.database,
            databases: restoredDatabaseNames(request.database, databases),
            credentialsSecret: `${secretNamespace}/${secretName}`,
          },
        },
      });
      await enqueueJob(tx, deps.secretsKey, { id: `restore-${id}`, type: 'restore.run', cell: deps.cell }, job);
    }
    return { row, version: await bumpCatalogVersion(tx) };
  }

  return {
    async request(principal: StrataPrincipal, request: RestoreRequest) {
      const { row, version } = await db.$transaction((tx) => create(tx, principal, request));
      deps.notify(restoreEvent(row, version));
      return { message: `Restore ${row.name} of ${row.targetNamespace}/${row.targetName} from backup ${row.backupId} ${row.phase === 'Succeeded' ? 'is ready' : 'started'}.`, kind: 'Restore', namespace: row.namespace, name: row.name, link: `/restores/${row.namespace}/${row.name}` };
    },
    /** A Restore document of an apply, inside the apply's transaction. */
    async fromResource(tx: Tx, namespace: string, name: string, spec: Record<string, unknown>, principal: StrataPrincipal) {
      const source = (spec.source ?? {}) as { backupID?: string; time?: string; latest?: boolean; targetNamespace?: string };
      const destination = (spec.destination ?? {}) as {
        mode: RestoreRequest['mode'];
        new?: { endpoint?: { host?: string; port?: number }; database?: string; credentialsSecretRef?: { name?: string; namespace?: string } };
        inPlace?: { confirm?: string; credentialsSecretRef?: { name?: string; namespace?: string }; skipSafetyBackup?: boolean };
        tables?: string[];
      };
      const inPlaceSecret = destination.inPlace?.credentialsSecretRef;
      const request: RestoreRequest = {
        target: `${source.targetNamespace ?? namespace}/${String(spec.target)}`,
        mode: destination.mode,
        ...(source.backupID ? { backupID: source.backupID } : {}),
        ...(source.time ? { at: source.time } : {}),
        ...(destination.new?.endpoint?.host ? { host: destination.new.endpoint.host } : {}),
        ...(destination.new?.endpoint?.port ? { port: destination.new.endpoint.port } : {}),
        ...(destination.new?.database ? { database: destination.new.database } : {}),
        ...(destination.new?.credentialsSecretRef?.name ? { credentialsSecret: `${destination.new.credentialsSecretRef.namespace ?? namespace}/${destination.new.credentialsSecretRef.name}` } : {}),
        ...(destination.inPlace?.confirm ? { confirm: destination.inPlace.confirm } : {}),
        ...(inPlaceSecret?.name ? { credentialsSecret: `${inPlaceSecret.namespace ?? namespace}/${inPlaceSecret.name}` } : {}),
        ...(destination.inPlace?.skipSafetyBackup ? { skipSafetyBackup: true } : {}),
        ...(destination.tables ? { tables: destination.tables } : {}),
        ...(typeof spec.reason === 'string' ? { reason: spec.reason } : {}),
        // A Restore document runs its checks unless it says otherwise (runChecks defaults to true).
        runChecks: spec.runChecks !== false,
        ...(Array.isArray(spec.checks) ? { checks: spec.checks as string[] } : {}),
      };
      const existing = await tx.restore.findUnique({ where: { namespace_name: { namespace, name } } });
      if (existing) return 'unchanged' as const;
      const { row, version } = await create(tx, principal, request, { namespace, name });
      deps.notify(restoreEvent(row, version));
      return 'created' as const;
    },
    afterSafetyBackup: (tx: Tx, backup: BackupRow) => inPlace.afterSafetyBackup(tx, backup),
    async list(limit: number, target?: string) {
      const [namespace, name] = target ? splitTarget(target) : [];
      const rows = await db.restore.findMany({ where: target ? { targetNamespace: namespace, targetName: name } : {}, orderBy: { createdAt: 'desc' }, take: limit });
      return rows.map(restoreView);
    },
    async get(namespace: string, name: string) {
      const row = await db.restore.findUnique({ where: { namespace_name: { namespace, name } } });
      if (!row) throw new AppError('not-found', `Restore ${namespace}/${name} was not found.`);
      return restoreView(row);
    },
  };
}

export type RestoreService = ReturnType<typeof createRestoreService>;

export async function explicitBackup(tx: Tx, namespace: string, target: string, backupID: string): Promise<BackupRow> {
  const row = await tx.backup.findUnique({ where: { id: backupID } });
  if (!row || row.namespace !== namespace || row.targetName !== target) {
    throw new AppError('not-found', `Backup ${backupID} of ${namespace}/${target} was not found.`);
  }
  if (row.phase !== BACKUP_PHASES.succeeded) throw new AppError('not-restorable', `Backup ${row.id} is ${row.phase}; only a completed backup can be restored.`);
  return row;
}

/** The backup and, for a time, the plan that restores it exactly (with change capture) or as near before it as there is. */
export async function chooseBackup(resources: RestoreDeps['resources'], tx: Tx, bundle: TargetBundle, request: Pick<RestoreRequest, 'backupID' | 'at'>): Promise<{ backup: BackupRow; plan?: RestorePlan }> {
  const { namespace, name } = bundle.target.metadata;
  if (request.backupID) return { backup: await explicitBackup(tx, namespace, name, request.backupID) };
  const plan = await planFor(tx, resources, bundle.target, request.at);
  if (!plan.restorable || !plan.backup) throw new AppError('not-restorable', plan.reason ?? `Target ${namespace}/${name} cannot be restored to ${request.at}.`);
  return { backup: plan.backup, plan };
}


/** The sealed job a mover runs to restore `backup` (to the plan's moment, when there is one) into `destination`. */
export async function restoreJob(
  deps: BackupDeps,
  tx: Tx,
  chosen: { bundle: TargetBundle; backup: BackupRow; plan?: RestorePlan; id: string; namespace: string; name: string },
  into: { destination: RestoreJob['destination']; databases: string[]; keepNames?: boolean; checks?: string[]; mode?: RestoreJob['mode']; tables?: string[] },
): Promise<RestoreJob> {
  const { bundle, backup, plan } = chosen;
  const manifest = (backup.manifest ?? {}) as { mode?: string };
  const segments = segmentsOf(plan);
  const access = await storeAccess(tx, deps.secrets, bundle.store);
  const identity = await storeIdentity(tx, deps.secrets, bundle.store, 'identitySecret');
  return {
    restoreId: chosen.id,
    namespace: chosen.namespace,
    name: chosen.name,
    mode: into.mode ?? 'new',
    ...(into.tables?.length ? { tables: into.tables } : {}),
    backupId: backup.id,
    manifestKey: backup.manifestKey ?? '',
    store: { ...access, identity },
    destination: into.destination,
    databases: into.databases,
    ...(into.keepNames ? { keepNames: true } : {}),
    bandwidthBytesPerSecond: bundle.policy.spec.limits?.restoreBandwidth ? parseQuantity(bundle.policy.spec.limits.restoreBandwidth) : 0,
    stallTimeoutMs: parseDuration(bundle.policy.spec.jobs?.stallTimeout ?? '60s'),
    ...(plan?.recoverTo && (manifest.mode === 'physical' || segments.length) ? { at: plan.recoverTo } : {}),
    ...(segments.length ? { segments } : {}),
    ...checksFor(bundle.target.spec as TargetSpec, into.checks),
  };
}

/** The source databases a backup holds: a physical backup lists them; a logical one has an object per database. */
export function databasesOf(manifest: { objects?: ManifestObject[]; databases?: string[]; mode?: string }): string[] {
  if (manifest.mode === 'physical') return manifest.databases ?? [];
  return (manifest.objects ?? []).filter((o) => o.role === 'data').map((o) => o.database ?? '').filter(Boolean);
}

function segmentsOf(plan: RestorePlan | undefined): SegmentObject[] {
  return (plan?.choice?.segments ?? []).map((s) => ({ name: s.name, key: s.key, sha256: s.sha256, partial: s.partial, compression: s.compression === 'none' ? 'none' : 'zstd', size: Number(s.size) }));
}

/** What the Restore records of its plan (RestorePlanRef). */
export function planRefOf(backup: BackupRow, plan: RestorePlan | undefined) {
  if (!plan) return undefined;
  return { baseBackupID: backup.id, segments: segmentsOf(plan).length, ...(plan.targetTime ? { targetTime: plan.targetTime } : {}), bytes: plan.bytes, message: planMessage(plan) };
}

/** What the plan restores, in words: exactly to a time, or the effective time of the newest full before it. */
function planMessage(plan: RestorePlan): string {
  if (plan.choice) return `backup ${plan.baseBackupID} plus ${plan.segments} WAL segments, recovered exactly to ${plan.effectiveTime}`;
  return `backup ${plan.baseBackupID}, consistent at ${plan.effectiveTime}${plan.targetTime && plan.targetTime !== plan.effectiveTime ? ` (the newest backup at or before ${plan.targetTime}; without change capture that is the time restored)` : ''}`;
}

/** The checks a restore asked for: its own list, or with `runChecks` the policy's verification checks (else the defaults). */
export function requestedChecks(request: Pick<RestoreRequest, 'checks' | 'runChecks'>, policyChecks: string[] | undefined): string[] | undefined {
  if (request.checks?.length) return request.checks;
  return request.runChecks ? (policyChecks?.length ? policyChecks : DEFAULT_VERIFY_CHECKS) : undefined;
}

/** Binlogs replay whole databases: a table-level MariaDB/MySQL restore can only use the dump, not a moment after it. */
export function refuseTablesWithBinlogs(spec: TargetSpec, tables: string[] | undefined, segments: number): void {
  if (tables?.length && spec.engine === 'mysql' && segments > 0) {
    throw new AppError('not-restorable', 'A table-level restore of MariaDB/MySQL to a moment of the window is not available: binlogs replay whole databases. Restore the database to a new name at that moment instead.');
  }
}

/** What a request must carry for its mode, checked before anything is looked up. */
function checkRequest(request: RestoreRequest): void {
  if (!request.mode) throw new AppError('validation-failed', 'mode: is required (sandbox, new, in-place or download)');
  if (request.mode === 'new') {
    for (const field of ['host', 'database', 'credentialsSecret'] as const) {
      if (!request[field]) throw new AppError('validation-failed', `${field}: is required for a restore into a new database`);
    }
  }
}

function pickObject(objects: ManifestObject[], database: string | undefined): ManifestObject {
  if (database) {
    const found = objects.find((o) => o.database === database);
    if (!found) throw new AppError('not-restorable', `The backup holds no database ${database}; it holds ${objects.map((o) => o.database).join(', ')}.`);
    return found;
  }
  if (objects.length === 1) return objects[0] as ManifestObject;
  throw new AppError('validation-failed', `database: the backup holds several databases (${objects.map((o) => o.database).join(', ')}); name the one to download`);
}

export function splitTarget(value: string, defaultNamespace = 'default'): [string, string] {
  const parts = value.split('/');
  if (parts.length === 1 && parts[0]) return [defaultNamespace, parts[0]];
  if (parts.length === 2 && parts[0] && parts[1]) return [parts[0], parts[1]];
  throw new AppError('validation-failed', `target: "${value}" must be namespace/name`);
}

export function restoreEvent(row: RestoreRow, version: bigint): ConsoleEvent {
  const progress = (row.progress ?? {}) as { stage?: string; bytes?: number };
  return { kind: 'restore', namespace: row.namespace, name: row.name, phase: row.phase, stage: progress.stage ?? '', message: row.message, bytes: Number(progress.bytes ?? 0), version: Number(version) };
}
