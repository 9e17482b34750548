import { createHash, randomBytes } from 'node:crypto';
import { parseDuration } from '@sigil/proto/units';
import type { PreviewSettings, StreamControlMessage, StreamJob, StrataReports } from '@sigil/proto/strata-jobs';
import type { BackupPolicySpec as PolicySpec, BackupTargetSpec as TargetSpec, TargetPitrStatus } from '@sigil/proto/resources';
import { DEFAULT_ENGINE_PORTS } from '@sigil/proto/strata';
import { mayReplicate, type BackupDeps } from '../backups/backups.ts';
import { enqueueJob } from '../backups/job-queue.ts';
import type { Tx } from '../db.ts';
import type { ResourceRepository, StoredResource } from '../resources/resources.ts';
import { releaseTargetSlots, slotName } from './replication.ts';
import { updatePitr } from './segments.ts';
import { CONDITION, findCondition, withConditions, type ConditionInput } from '../resources/conditions.ts';
import { databaseCredentials, findPolicy, findStore, storeAccess } from '../resources/stores.ts';

export interface StreamDeps extends BackupDeps {
  /** Plain NATS to the movers' streamers (stop). */
  control: (message: StreamControlMessage) => void;
}

export function pitrSettings(target: StoredResource<TargetSpec>, policy: StoredResource<PolicySpec> | undefined): { enabled: boolean; partialIntervalMs: number } {
  const enabled = target.spec.pitr?.enabled ?? policy?.spec.pitr?.enabled ?? false;
  const interval = target.spec.pitr?.partialInterval ?? policy?.spec.pitr?.partialInterval ?? '60s';
  return { enabled, partialIntervalMs: Math.max(1000, parseDuration(interval)) };
}

/** Whether the target asks for previews: by default on for mysql, and for postgres when it asks for logical decoding. */
function previewsAsked(target: StoredResource<TargetSpec>): boolean {
  const previews = target.spec.previews ?? {};
  return previews.enabled ?? (target.spec.engine === 'mysql' || (target.spec.engine === 'postgres' && previews.logical === true));
}

/**
 * What the streamer makes previews with: the target's `previews` when they are on and its engine can make them
 * (MariaDB/MySQL from binlog row images; Postgres by logical decoding, which needs `previews.logical`).
 */
export function previewSettings(target: StoredResource<TargetSpec>): PreviewSettings | undefined {
  const previews = target.spec.previews ?? {};
  if (!previewsAsked(target)) return undefined;
  if (target.spec.engine !== 'mysql' && !(target.spec.engine === 'postgres' && previews.logical)) return undefined;
  return { rows: previews.rows ?? 5, maxValueLength: previews.maxValueLength ?? 64, mask: target.spec.mask ?? [] };
}

/** The previews a streamer was handed, in a word that changes with them ('' for none). */
export function previewsDigest(settings: PreviewSettings | undefined): string {
  return settings ? createHash('sha256').update(JSON.stringify([settings.rows, settings.maxValueLength, settings.mask])).digest('hex').slice(0, 16) : '';
}

const previewsOf = (target: StoredResource<TargetSpec>): { previews?: PreviewSettings } => {
  const previews = previewSettings(target);
  return previews ? { previews } : {};
};

export type PreviewsState = { state: 'off' | 'on' } | { state: 'unavailable'; code: string; reason: string };

/** Whether a target's previews are off, made, or asked for but not possible (with a reason code and the reason in words). */
export function previewsState(target: StoredResource<TargetSpec>, status: Record<string, unknown> = target.status): PreviewsState {
  if (!previewsAsked(target)) return { state: 'off' };
  if (target.spec.engine === 'postgres' && !target.spec.previews?.logical) {
    return { state: 'unavailable', code: 'LogicalDecodingOff', reason: 'Postgres previews are made by logical decoding: set previews.logical: true (it keeps a pgoutput slot per database next to the physical one, which retains extra WAL)' };
  }
  if (target.spec.engine !== 'postgres' && target.spec.engine !== 'mysql') return { state: 'unavailable', code: 'PreviewsNotBuilt', reason: `${target.spec.engine} has no change stream, so no previews` };
  const problem = (status as { pitr?: TargetPitrStatus }).pitr?.previewsProblem;
  if (problem) return { state: 'unavailable', code: /wal_level/.test(problem) ? 'WalLevelNotLogical' : 'PreviewsUnavailable', reason: problem };
  return { state: 'on' };
}

/**
 * The target's `Previews` condition: True while previews are made (reason `PreviewsOn`), False while they are asked for
 * but cannot be made (`LogicalDecodingOff`, `WalLevelNotLogical`, `PreviewsUnavailable`, `PreviewsNotBuilt`, with the
 * reason in words: never a silent absence). Off, it is not set, or set True with reason `PreviewsOff` once it was set before.
 */
export function previewsCondition(target: StoredResource<TargetSpec>, status: Record<string, unknown>): ConditionInput[] {
  const state = previewsState(target, status);
  if (state.state === 'on') return [{ type: CONDITION.previews, status: 'True', reason: 'PreviewsOn', message: 'masked row previews are made of every segment' }];
  if (state.state === 'unavailable') return [{ type: CONDITION.previews, status: 'False', reason: state.code, message: state.reason }];
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
      ...(target.spec.databases?.length ? { databases: target.spec.databases } : {}),
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
    const releases: Array<StoredResource<TargetSpec>> = [];
    await db.$transaction(async (tx) => {
      const locked = await tx.$queryRawUnsafe<Array<{ ok: boolean }>>(`SELECT pg_try_advisory_xact_lock(hashtext('strata-streams')) AS ok`);
      if (!locked[0]?.ok) return;
      for (const target of await resources.list<TargetSpec>(tx, 'BackupTarget')) {
        const { namespace, name } = target.metadata;
        const pitr = pitrOf(target);
        const { ok, policy, settings } = await wants(tx, target);
        if (!ok || !policy) {
          if (pitr.streamId) {
            // A suspended target keeps its slots (it resumes where it was); one whose change capture is off drops its previews' slots.
            const releasePreviews = !target.spec.suspend;
            stops.push({ action: 'stop', targetUid: target.metadata.uid, ...(releasePreviews ? { releasePreviews } : {}) });
            if (releasePreviews) releases.push(target);
            await updatePitr(tx, resources, namespace, name, (now) => ({ ...withoutStream(now), enabled: false, streamerReady: false }));
          }
          continue;
        }
        const digest = previewsDigest(previewSettings(target));
        const heard = Math.max(Date.parse(pitr.streamSeenAt ?? '') || 0, Date.parse(pitr.streamRequestedAt ?? '') || 0);
        const previewsChanged = pitr.streamId !== undefined && (pitr.streamPreviews ?? '') !== digest;
        if (pitr.streamId && !previewsChanged && now.getTime() - heard < staleAfter(settings.partialIntervalMs)) continue;
        // The previews were turned on, off or changed: the running streamer stops (dropping its logical slots if none are wanted now).
        if (previewsChanged) stops.push({ action: 'stop', streamId: pitr.streamId, ...(digest ? {} : { releasePreviews: true }) });
        const streamId = `${target.metadata.uid.slice(0, 8)}-${now.getTime().toString(36)}-${randomBytes(3).toString('hex')}`;
        let job: StreamJob;
        try {
          job = await buildJob(tx, target, policy, settings.partialIntervalMs, streamId);
        } catch (error) {
          await updatePitr(tx, resources, namespace, name, (now) => ({ ...now, enabled: true, streamerReady: false, streamMessage: (error as Error).message }));
          continue;
        }
        await enqueueJob(tx, deps.secretsKey, { id: `stream-${streamId}`, type: 'stream.run', cell: deps.cell }, job);
        const why = previewsChanged ? 'the previews changed; handed to a new streamer' : pitr.streamId ? 'the streamer stopped reporting; handed to a mover again' : 'handed to a mover';
        const retired = previewsChanged && pitr.streamId ? { retiredStreams: [...(pitr.retiredStreams ?? []), pitr.streamId].slice(-5) } : {};
        await updatePitr(tx, resources, namespace, name, (current) => ({ ...current, ...retired, enabled: true, streamId, streamPreviews: digest, streamRequestedAt: now.toISOString(), streamerReady: false, streamMessage: why }));
      }
    });
    for (const stop of stops) deps.control(stop);
    // Slots a dead streamer left (one alive drops them itself as it stops: they are in use until then).
    for (const target of releases) await releaseTargetSlots(db, deps.secrets, target, 'previews').catch(() => undefined);
  }

  /** What a streamer reports: it is the target's streamer while it streams; one the target does not want is stopped. */
  async function applyStatus(tx: Tx, data: StrataReports['stream.status'], at: Date): Promise<void> {
    const target = await resources.get<TargetSpec>(tx, 'BackupTarget', data.namespace, data.name);
    if (!target) {
      deps.control({ action: 'stop', streamId: data.streamId, release: true });
      return;
    }
    if (data.state === 'streaming') {
      const { streamId, streamSeenAt, retiredStreams } = pitrOf(target);
      // One stopped on purpose (its stop may have crossed its start) is stopped again.
      if (retiredStreams?.includes(data.streamId)) {
        deps.control({ action: 'stop', streamId: data.streamId });
        return;
      }
      // A replaced streamer's report delivered late must not take the stream back (its finding of lost WAL still counts).
      if (streamId && data.streamId !== streamId && streamSeenAt && Date.parse(data.at) < Date.parse(streamSeenAt)) {
        if (data.brokenReason) await updatePitr(tx, resources, data.namespace, data.name, (pitr) => ({ ...pitr, brokenReason: data.brokenReason, brokenAt: data.at }));
        return;
      }
      if (!(await wants(tx, target)).ok) {
        deps.control({ action: 'stop', streamId: data.streamId, ...(target.spec.suspend ? {} : { releasePreviews: true }) });
        return;
      }
      await recordPreviewsProblem(tx, resources, target, data.previewsProblem, at);
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
      // A failure stays in `streamFailure` after the next streamer reports streaming, which may be a moment later.
      const failure = data.state === 'failed' ? { streamFailure: { message: data.message, at: data.at } } : {};
      await updatePitr(tx, resources, data.namespace, data.name, (pitr) => (data.streamId === pitr.streamId ? { ...pitr, streamerReady: false, streamMessage: data.message, streamSeenAt: at.toISOString(), ...failure } : pitr));
    }
  }

  return { tick, applyStatus };
}

export type StreamSupervisor = ReturnType<typeof createStreamSupervisor>;

/** A streamer's coverage as the target's status keeps it. */
function coverageOf(data: StrataReports['stream.status']): Partial<TargetPitrStatus> {
  return { coveredUntil: data.coveredUntil, coveredPos: data.coveredPos ?? '', coveredTimeline: data.coveredTimeline };
}

/** What the streamer said of the previews it cannot make goes in the status, and the Previews condition follows it. */
async function recordPreviewsProblem(tx: Tx, resources: ResourceRepository, target: StoredResource<TargetSpec>, problem: string | undefined, at: Date): Promise<void> {
  const pitr = pitrOf(target);
  if ((pitr.previewsProblem ?? '') === (problem ?? '')) return;
  await resources.updateStatus(tx, 'BackupTarget', target.metadata.namespace, target.metadata.name, (current) => {
    const { previewsProblem: _old, ...rest } = ((current.status as { pitr?: TargetPitrStatus }).pitr ?? {}) as TargetPitrStatus;
    const status = { ...current.status, pitr: { ...rest, ...(problem ? { previewsProblem: problem } : {}) } };
    return withConditions(status, previewsCondition(target, status), current.metadata.generation, at);
  });
}

function withoutStream(pitr: TargetPitrStatus): TargetPitrStatus {
  const { streamId: _id, streamRequestedAt: _r, ...rest } = pitr;
  return rest;
}
