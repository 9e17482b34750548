import { randomBytes } from 'node:crypto';
import { parseDuration } from '@sigil/proto/units';
import type { PreviewSettings, StreamControlMessage, StreamJob, StrataReports } from '@sigil/proto/strata-jobs';
import type { BackupPolicySpec as PolicySpec, BackupTargetSpec as TargetSpec, TargetPitrStatus } from '@sigil/proto/resources';
import { DEFAULT_ENGINE_PORTS } from '@sigil/proto/strata';
import { mayReplicate, type BackupDeps } from '../backups/backups.ts';
import { enqueueJob } from '../backups/job-queue.ts';
import type { Tx } from '../db.ts';
import type { StoredResource } from '../resources/resources.ts';
import { updatePitr } from './segments.ts';
import { CONDITION, findCondition, type ConditionInput } from '../resources/conditions.ts';
import { databaseCredentials, findPolicy, findStore, storeAccess } from '../resources/stores.ts';

export interface StreamDeps extends BackupDeps {
  /** Plain NATS to the movers' streamers (stop). */
  control: (message: StreamControlMessage) => void;
}

/** The replication slot of a target: one per target, named after its uid so a renamed target keeps its WAL. */
export function slotName(uid: string): string {
  return `strata_${uid.toLowerCase().replace(/[^a-z0-9]/g, '_')}`.slice(0, 63);
}

export function pitrSettings(target: StoredResource<TargetSpec>, policy: StoredResource<PolicySpec> | undefined): { enabled: boolean; partialIntervalMs: number } {
  const enabled = target.spec.pitr?.enabled ?? policy?.spec.pitr?.enabled ?? false;
  const interval = target.spec.pitr?.partialInterval ?? policy?.spec.pitr?.partialInterval ?? '60s';
  return { enabled, partialIntervalMs: Math.max(1000, parseDuration(interval)) };
}

/**
 * What the streamer makes previews with: the target's `previews` when they are on (by default for mysql) and built for
 * its engine (MariaDB/MySQL binlogs; Postgres logical decoding is not built yet: `previewsState` says so).
 */
export function previewSettings(target: StoredResource<TargetSpec>): PreviewSettings | undefined {
  const previews = target.spec.previews ?? {};
  if (target.spec.engine !== 'mysql' || !(previews.enabled ?? true)) return undefined;
  return { rows: previews.rows ?? 5, maxValueLength: previews.maxValueLength ?? 64, mask: target.spec.mask ?? [] };
}

const previewsOf = (target: StoredResource<TargetSpec>): { previews?: PreviewSettings } => {
  const previews = previewSettings(target);
  return previews ? { previews } : {};
};

/** Whether a target's previews are off, made, or asked for but not built for its engine (with the reason). */
export function previewsState(target: StoredResource<TargetSpec>): { state: 'off' | 'on' } | { state: 'unavailable'; reason: string } {
  const previews = target.spec.previews ?? {};
  const enabled = previews.enabled ?? target.spec.engine === 'mysql';
  if (!enabled) return { state: 'off' };
  if (target.spec.engine === 'mysql') return { state: 'on' };
  if (target.spec.engine === 'postgres') {
    return { state: 'unavailable', reason: `Postgres previews are not built yet (they need a logical decoding slot, previews.logical${previews.logical ? ', which is set but not used yet' : ''}); segments of this target have no previews` };
  }
  return { state: 'unavailable', reason: `${target.spec.engine} has no change stream, so no previews` };
}

/**
 * The target's `Previews` condition: True while previews are made (reason `PreviewsOn`), False while they are asked for
 * but not built for its engine (`PreviewsNotBuilt`, the reason in words: never a silent absence). Off, it is not set,
 * or set True with reason `PreviewsOff` once it was set before.
 */
export function previewsCondition(target: StoredResource<TargetSpec>, status: Record<string, unknown>): ConditionInput[] {
  const state = previewsState(target);
  if (state.state === 'on') return [{ type: CONDITION.previews, status: 'True', reason: 'PreviewsOn', message: 'masked row previews are made of every segment' }];
  if (state.state === 'unavailable') return [{ type: CONDITION.previews, status: 'False', reason: 'PreviewsNotBuilt', message: state.reason }];
  return findCondition(status, CONDITION.previews) ? [{ type: CONDITION.previews, status: 'True', reason: 'PreviewsOff', message: 'previews are off' }] : [];
}

const pitrOf = (target: StoredResource<TargetSpec>): TargetPitrStatus => ((target.status as { pitr?: TargetPitrStatus }).pitr ?? {});

/** A streamer that has not reported for this long is replaced (it died with its mover, or its job was lost). */
const staleAfter = (partialIntervalMs: number): number => Math.max(3 * partialIntervalMs + 30_000, 90_000);

/**
 * Keeps one change-log streamer per target that wants one (postgres, pitr enabled, not suspended, replication
 * allowed): hands a `stream.run` job to the movers when none reports, stops streamers of targets that no longer
 * want one. Runs under an advisory lock so replicas never hand out two at once.
 */
export function createStreamSupervisor(deps: StreamDeps) {
  const { db, resources } = deps;

  async function wants(tx: Tx, target: StoredResource<TargetSpec>) {
    const policy = await findPolicy(tx, resources, target.metadata.namespace, target.spec.policy);
    const settings = pitrSettings(target, policy);
    const ok = (target.spec.engine === 'postgres' || target.spec.engine === 'mysql') && settings.enabled && !target.spec.suspend && mayReplicate(pitrOf(target)) && policy !== undefined;
    return { ok, policy, settings };
  }

  async function buildJob(tx: Tx, target: StoredResource<TargetSpec>, policy: StoredResource<PolicySpec>, partialIntervalMs: number, streamId: string): Promise<StreamJob> {
    const store = await findStore(tx, resources, policy.metadata.namespace, policy.spec.store);
    if (!store) throw new Error(`store ${policy.spec.store} does not exist`);
    if (store.spec.readOnly) throw new Error(`store ${policy.spec.store} is read-only: the change log cannot be written to it`);
    const compression = policy.spec.compression ?? {};
    return {
      streamId,
      namespace: target.metadata.namespace,
      name: target.metadata.name,
      targetUid: target.metadata.uid,
      database: { engine: target.spec.engine, host: target.spec.endpoint.host, port: target.spec.endpoint.port ?? DEFAULT_ENGINE_PORTS[target.spec.engine], ...(await databaseCredentials(tx, deps.secrets, target)) },
      slot: slotName(target.metadata.uid),
      store: { ...(await storeAccess(tx, deps.secrets, store)), ageRecipients: store.spec.encryption.ageRecipients, catalogRecipients: store.spec.encryption.catalogRecipients ?? [] },
      compression: { algorithm: compression.algorithm ?? 'zstd', level: compression.level ?? 'default', threads: compression.threads ?? 0 },
      partialIntervalMs,
      ...(target.spec.engine === 'mysql' ? await binlogStart(tx, target) : {}),
      ...previewsOf(target),
    };
  }

  /** A binlog streamer starts at the newest file in the store (uploaded again whole), else at the newest full's file. */
  async function binlogStart(tx: Tx, target: StoredResource<TargetSpec>): Promise<{ startFile?: string }> {
    const { namespace, name } = target.metadata;
    const newest = await tx.segment.findFirst({ where: { namespace, targetName: name, missing: false }, orderBy: { startLsn: 'desc' } });
    if (newest) return { startFile: newest.name };
    const fulls = await tx.backup.findMany({ where: { namespace, targetName: name, phase: 'Succeeded' }, orderBy: { completedAt: 'desc' }, take: 1 });
    const file = ((fulls[0]?.manifest ?? {}) as { position?: { binlogFile?: string } }).position?.binlogFile;
    return file ? { startFile: file } : {};
  }

  /** One pass over the targets. */
  async function tick(now = deps.clock()): Promise<void> {
    const stops: StreamControlMessage[] = [];
    await db.$transaction(async (tx) => {
      const locked = await tx.$queryRawUnsafe<Array<{ ok: boolean }>>(`SELECT pg_try_advisory_xact_lock(hashtext('strata-streams')) AS ok`);
      if (!locked[0]?.ok) return;
      for (const target of await resources.list<TargetSpec>(tx, 'BackupTarget')) {
        const { namespace, name } = target.metadata;
        const pitr = pitrOf(target);
        const { ok, policy, settings } = await wants(tx, target);
        if (!ok || !policy) {
          if (pitr.streamId) {
            stops.push({ action: 'stop', targetUid: target.metadata.uid });
            await updatePitr(tx, resources, namespace, name, (now) => ({ ...withoutStream(now), enabled: false, streamerReady: false }));
          }
          continue;
        }
        const heard = Math.max(Date.parse(pitr.streamSeenAt ?? '') || 0, Date.parse(pitr.streamRequestedAt ?? '') || 0);
        if (pitr.streamId && now.getTime() - heard < staleAfter(settings.partialIntervalMs)) continue;
        const streamId = `${target.metadata.uid.slice(0, 8)}-${now.getTime().toString(36)}-${randomBytes(3).toString('hex')}`;
        let job: StreamJob;
        try {
          job = await buildJob(tx, target, policy, settings.partialIntervalMs, streamId);
        } catch (error) {
          await updatePitr(tx, resources, namespace, name, (now) => ({ ...now, enabled: true, streamerReady: false, streamMessage: (error as Error).message }));
          continue;
        }
        await enqueueJob(tx, deps.secretsKey, { id: `stream-${streamId}`, type: 'stream.run', cell: deps.cell }, job);
        await updatePitr(tx, resources, namespace, name, (current) => ({
          ...current, enabled: true, streamId, streamRequestedAt: now.toISOString(), streamerReady: false, streamMessage: pitr.streamId ? 'the streamer stopped reporting; handed to a mover again' : 'handed to a mover',
        }));
      }
    });
    for (const stop of stops) deps.control(stop);
  }

  /** What a streamer reports: it is the target's streamer while it streams; one the target does not want is stopped. */
  async function applyStatus(tx: Tx, data: StrataReports['stream.status'], at: Date): Promise<void> {
    const target = await resources.get<TargetSpec>(tx, 'BackupTarget', data.namespace, data.name);
    if (!target) {
      deps.control({ action: 'stop', streamId: data.streamId, release: true });
      return;
    }
    if (data.state === 'streaming') {
      // A replaced streamer's report delivered late must not take the stream back (its finding of lost WAL still counts).
      const { streamId, streamSeenAt } = pitrOf(target);
      if (streamId && data.streamId !== streamId && streamSeenAt && Date.parse(data.at) < Date.parse(streamSeenAt)) {
        if (data.brokenReason) await updatePitr(tx, resources, data.namespace, data.name, (pitr) => ({ ...pitr, brokenReason: data.brokenReason, brokenAt: data.at }));
        return;
      }
      if (!(await wants(tx, target)).ok) {
        deps.control({ action: 'stop', streamId: data.streamId });
        return;
      }
      await updatePitr(tx, resources, data.namespace, data.name, (pitr) => ({
        ...pitr,
        enabled: true,
        streamId: data.streamId,
        streamSeenAt: data.at,
        streamerReady: true,
        streamMessage: data.message,
        ...(data.coveredUntil && (!pitr.coveredUntil || Date.parse(data.coveredUntil) > Date.parse(pitr.coveredUntil)) ? coverageOf(data) : {}),
        ...(data.lagSeconds !== undefined ? { lagSeconds: Math.round(data.lagSeconds) } : {}),
        ...(data.brokenReason ? { brokenReason: data.brokenReason, brokenAt: data.at } : {}),
      }));
    } else {
      await updatePitr(tx, resources, data.namespace, data.name, (pitr) => (data.streamId === pitr.streamId ? { ...pitr, streamerReady: false, streamMessage: data.message, streamSeenAt: at.toISOString() } : pitr));
    }
  }

  return { tick, applyStatus };
}

export type StreamSupervisor = ReturnType<typeof createStreamSupervisor>;

/** A streamer's coverage as the target's status keeps it. */
function coverageOf(data: StrataReports['stream.status']): Partial<TargetPitrStatus> {
  return { coveredUntil: data.coveredUntil, coveredPos: data.coveredPos ?? '', coveredTimeline: data.coveredTimeline };
}

function withoutStream(pitr: TargetPitrStatus): TargetPitrStatus {
  const { streamId: _id, streamRequestedAt: _r, ...rest } = pitr;
  return rest;
}
