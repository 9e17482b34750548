import { AppError } from '@sigil/kit/errors';
import { restoredDatabaseNames } from '@sigil/proto/strata-jobs';
import { roleAtLeast, type StrataPrincipal } from '@sigil/proto/strata';
import { createS3Client, presignGet } from '@strata/stream';
import type { BackupDeps, BackupRow } from '../backups/backups.ts';
import { enqueueJob, newRunId } from '../backups/job-queue.ts';
import { bumpCatalogVersion, type Tx } from '../db.ts';
import type { BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import { DEFAULT_ENGINE_PORTS as DEFAULT_PORTS } from '@sigil/proto/strata';
import { loadTargetBundle, storeAccess, type TargetBundle } from '../resources/stores.ts';
import type { RestorePlan } from './plans.ts';
import { createInPlaceRestores } from './in-place.ts';
import { asksLatest, chooseBackup, databasesOf, planRefOf, refuseTablesWithBinlogs, requestedChecks, restoreEvent, restoreJob, splitTarget, planMessage, segmentsOf, type ManifestObject, type RestorePlanRef, type RestoreRequest } from './restore-steps.ts';
import { replayStart, writeBinlogBundle, writeDownloadBundle, writeRecoveryBundle, type ExportObject } from './recovery-bundle.ts';
import type { RestoreRow } from '../console/views.ts';

export interface RestoreDeps extends BackupDeps {
  downloadTtlSeconds: number;
}

interface BackupManifest {
  objects?: ManifestObject[];
  databases?: string[];
  mode?: string;
  position?: ManifestObject['position'];
  server?: { major?: number };
}

/** What every mode of `create` shares once the backup and plan are chosen: the row's common columns among them. */
interface Chosen {
  bundle: TargetBundle;
  backup: BackupRow;
  plan?: RestorePlan;
  id: string;
  namespace: string;
  name: string;
  base: { id: string; namespace: string; name: string; targetNamespace: string; targetName: string; backupId: string; mode: string; reason: string; requestedBy: string; latest: boolean; plan?: RestorePlanRef };
}

/**
 * Restores in modes new, in-place and download. Phases: Running (handed to a mover), Succeeded, Failed. A download
 * succeeds at once. What the console reads of them is in restore-queries.ts.
 */
export function createRestoreService(deps: RestoreDeps) {
  const { db, resources } = deps;
  const inPlace = createInPlaceRestores(deps);

  /** The restore's row; the caller bumps the catalog version, last in its transaction (an apply, after every document). */
  async function create(tx: Tx, principal: StrataPrincipal, request: RestoreRequest, named?: { namespace: string; name: string }): Promise<RestoreRow> {
    // The mode's role (x-strata-mode-roles) is authorization: refused before the request is read, as x-strata-role is.
    if (request.mode === 'in-place' && !roleAtLeast(principal.role, 'restorer-admin')) throw new AppError('forbidden', `An in-place restore needs the role restorer-admin; you are ${principal.role}.`);
    const [targetNamespace, targetName] = splitTarget(request.target, named?.namespace);
    checkRequest(request);
    if (request.mode === 'in-place') {
      if (request.confirm !== targetName) throw new AppError('validation-failed', `confirm: must equal the target name ${targetName} for an in-place restore`);
      return inPlace.create(tx, principal, request, { namespace: named?.namespace ?? targetNamespace, ...(named?.name ? { name: named.name } : {}) });
    }
    if (request.mode === 'sandbox') throw new AppError('not-restorable', 'A Restore document in mode sandbox is not applied in this release; POST /api/v1/restores or /api/v1/sandboxes creates one.');
    const bundle = await loadTargetBundle(tx, resources, targetNamespace, targetName);
    const { backup, plan } = await chooseBackup(resources, tx, bundle, request);
    refuseTablesWithBinlogs(bundle.target.spec as TargetSpec, request.tables, segmentsOf(plan).length);
    const id = newRunId(deps.clock());
    const namespace = named?.namespace ?? targetNamespace;
    const name = named?.name ?? `${targetName}-restore-${id}`.slice(0, 253);
    if (await tx.restore.findUnique({ where: { namespace_name: { namespace, name } } })) {
      throw new AppError('conflict', `Restore ${namespace}/${name} already exists.`);
    }
    const planRef = planRefOf(backup, plan);
    const chosen: Chosen = {
      bundle, backup, plan, id, namespace, name,
      base: {
        id, namespace, name, targetNamespace, targetName, backupId: backup.id, mode: request.mode,
        reason: request.reason ?? '', requestedBy: principal.email || principal.id, latest: asksLatest(request),
        ...(planRef ? { plan: planRef } : {}),
      },
    };
    return request.mode === 'download' ? download(tx, request, chosen) : intoNewDatabase(tx, request, chosen);
  }

  /** A download succeeds at once: its URL is the artifact, or a README with the links and the commands. */
  async function download(tx: Tx, request: RestoreRequest, chosen: Chosen): Promise<RestoreRow> {
    const { bundle, backup, plan } = chosen;
    const manifest = (backup.manifest ?? {}) as BackupManifest;
    const dataObjects = (manifest.objects ?? []).filter((o) => o.role === 'data');
    // Selective exports travel with every download: listed in the README after the dump or the recovery steps.
    const exports = (manifest.objects ?? []).filter((o): o is ExportObject & ManifestObject => o.role === 'export' && typeof o.name === 'string');
    const segments = segmentsOf(plan);
    const now = deps.clock();
    const ready = (downloadUrl: string, message: string, database: string) =>
      tx.restore.create({
        data: { ...chosen.base, phase: 'Succeeded', message, destination: { mode: 'download', database }, downloadUrl, downloadExpires: new Date(now.getTime() + deps.downloadTtlSeconds * 1000), startedAt: now, completedAt: now },
      });
    const access = await storeAccess(tx, deps.secrets, bundle.store);
    const where = { prefix: access.prefix, namespace: bundle.target.metadata.namespace, target: bundle.target.metadata.name, restoreId: chosen.id };
    const to = plan?.targetTime ? ` to ${plan.targetTime}` : '';
    if (manifest.mode === 'physical') {
      const url = await writeRecoveryBundle(createS3Client(access), access.bucket, where, {
        base: dataObjects[0] as ManifestObject, segments, recoverTo: plan?.recoverTo, major: manifest.server?.major, ttlSeconds: deps.downloadTtlSeconds, exports,
      });
      return await ready(url, `Recovery bundle of backup ${backup.id}${segments.length ? ` with ${segments.length} WAL segments` : ''}${to}: the URL is a README with the links and the commands to recover by hand`, '');
    }
    const object = pickObject(dataObjects, request.database);
    if (segments.length) {
      const { startPosition, binlogs } = replayStart(object, manifest.position, segments);
      const url = await writeBinlogBundle(createS3Client(access), access.bucket, where, { dump: object, segments: binlogs, startPosition, recoverTo: plan?.recoverTo, ttlSeconds: deps.downloadTtlSeconds, exports });
      return await ready(url, `Point-in-time bundle of ${object.database ?? 'the backup'} from backup ${backup.id} with ${segments.length} binlogs${to}: the URL is a README with the links and the commands to replay by hand`, object.database ?? '');
    }
    if (exports.length) {
      const url = await writeDownloadBundle(createS3Client(access), access.bucket, where, { dump: object, exports, ttlSeconds: deps.downloadTtlSeconds });
      return await ready(url, `Download of ${object.database ?? 'the backup'} from backup ${backup.id} with ${exports.length} selective export(s): the URL is a README with a link to each and the commands to decrypt them`, object.database ?? '');
    }
    const url = await presignGet(createS3Client(access), bundle.store.spec.s3.bucket, object.key, deps.downloadTtlSeconds);
    return await ready(url, `Encrypted artifact of ${object.database ?? 'the backup'} (sha256 ${object.sha256}); decrypt with: age -d -i IDENTITY | ${object.compression === 'zstd' ? 'zstd -d' : 'cat'}`, object.database ?? '');
  }

  /** Mode `new`: a mover restores into a new database on the server given, with the credentials secret named. */
  async function intoNewDatabase(tx: Tx, request: RestoreRequest, chosen: Chosen): Promise<RestoreRow> {
    const { bundle, backup, plan, id, namespace } = chosen;
    if (!request.host || !request.database || !request.credentialsSecret) throw new Error('checked by checkRequest');
    const engine = (bundle.target.spec as TargetSpec).engine;
    const [secretNamespace, secretName] = splitTarget(request.credentialsSecret, namespace);
    const username = await deps.secrets.resolve(tx, { namespace: secretNamespace, name: secretName, key: 'username' });
    const password = await deps.secrets.resolve(tx, { namespace: secretNamespace, name: secretName, key: 'password', optional: true });
    const databases = databasesOf((backup.manifest ?? {}) as BackupManifest);
    const job = await restoreJob(deps, tx, chosen, {
      destination: { engine, host: request.host, port: request.port ?? DEFAULT_PORTS[engine], username: username ?? '', password: password ?? '', database: request.database },
      databases,
      checks: requestedChecks(request, bundle.policy.spec.verify?.checks),
      ...(request.tables?.length ? { tables: request.tables } : {}),
    });
    const row = await tx.restore.create({
      data: {
        ...chosen.base,
        phase: 'Running',
        message: plan ? `handed to a mover; ${planMessage(plan)}` : 'handed to a mover',
        destination: {
          mode: 'new',
          host: `${request.host}:${job.destination.port}`,
          database: request.database,
          databases: restoredDatabaseNames(request.database, databases),
          credentialsSecret: `${secretNamespace}/${secretName}`,
          ...(request.tables?.length ? { tables: request.tables } : {}),
        },
      },
    });
    await enqueueJob(tx, deps.secretsKey, { id: `restore-${id}`, type: 'restore.run', cell: deps.cell }, job);
    return row;
  }

  return {
    async request(principal: StrataPrincipal, request: RestoreRequest) {
      const { row, version } = await db.$transaction(async (tx) => {
        const row = await create(tx, principal, request);
        return { row, version: await bumpCatalogVersion(tx) };
      });
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
      // The apply bumps the catalog version after its last document and tells listeners then.
      await create(tx, principal, request, { namespace, name });
      return 'created' as const;
    },
    afterSafetyBackup: (tx: Tx, backup: BackupRow) => inPlace.afterSafetyBackup(tx, backup),
  };
}

export type RestoreService = ReturnType<typeof createRestoreService>;

/**
 * What a request must carry for its mode, checked before anything is looked up. The contract leaves mode optional
 * (a sandbox request may omit it) but a restore's mode has no default: POST /restores without one is a 400.
 */
function checkRequest(request: RestoreRequest): asserts request is RestoreRequest & { mode: NonNullable<RestoreRequest['mode']> } {
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
