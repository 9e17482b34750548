import type { Logger } from '@sigil/kit/log';
import type { components } from '@sigil/proto/api/strata';
import type { ResourceCondition } from '@sigil/proto/resources';
import { DEFAULT_ENGINE_PORTS } from '@sigil/proto/strata';
import { BACKUP_PHASES } from '../backups/backups.ts';
import { CONDITION, lastBackupCondition, REASONS, withConditions, type ConditionInput } from './conditions.ts';
import { bumpCatalogVersion, type Db, type Tx } from '../db.ts';
import type { ConsoleEvent } from '../console/events.ts';
import { PROBE_TIMEOUT_MS, probeBucket, probeDatabase, type ProbeResult } from './probes.ts';
import { replicationRights, type ReplicationRights } from '../change-capture/replication.ts';
import { previewsCondition } from '../change-capture/streams.ts';
import { affectedBy, referenceProblems, typed } from './references.ts';
import { STORED_KINDS, type AppliedItem, type ResourceRepository, type StoredKind, type StoredResource } from './resources.ts';
import type { SecretStore } from './secrets.ts';
import { databaseCredentials, storeAccess } from './stores.ts';

/** Without any change, each resource is checked again this often (on the scheduler's tick). */
export const RECHECK_INTERVAL_MS = 5 * 60_000;

export interface StatusDeps {
  db: Db;
  resources: ResourceRepository;
  secrets: SecretStore;
  clock: () => Date;
  notify: (event: ConsoleEvent) => void;
  log: Logger;
  probeTimeoutMs?: number;
  recheckIntervalMs?: number;
  /** Checks that run at once (each may open a connection to a database server or a store). */
  concurrency?: number;
}

/** A problem of an applied document that does not stop the apply: a name that points nowhere, an unusable key. */
export type ApplyWarning = components['schemas']['ResourceProblem'];

type Change = Pick<AppliedItem, 'kind' | 'namespace' | 'name'>;

/**
 * The status of stores, policies and targets as a Kubernetes operator writes it: `Ready` from what the resource
 * names (the catalog's own data) and from reaching its bucket or database server with the stored credentials,
 * `LastBackupSucceeded` for targets, then phase, message and observedGeneration. Checks of one resource never
 * overlap in this process, and a check never holds a transaction while it waits on the network.
 */
export function createStatusWriter(deps: StatusDeps) {
  const { db, resources } = deps;
  const timeoutMs = deps.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
  const recheckMs = deps.recheckIntervalMs ?? RECHECK_INTERVAL_MS;
  const checkedAt = new Map<string, number>();
  const running = new Map<string, Promise<void>>();
  let pass: Promise<void> | undefined;
  let again = false;
  const keyOf = (r: Change) => `${r.kind}/${r.namespace}/${r.name}`;
  const changeOf = (r: StoredResource): Change => ({ kind: r.kind, namespace: r.metadata.namespace, name: r.metadata.name });

  /** The Ready condition, and for a target that answers, whether its user may replicate (`status.pitr`). */
  async function readiness(stored: StoredResource): Promise<{ condition: ConditionInput; replication?: ReplicationRights }> {
    const [problem] = await referenceProblems(db, deps, stored);
    if (problem) return { condition: ready('False', problem.reason, problem.message) };
    const resource = typed(stored);
    if (resource.kind === 'BackupPolicy') return { condition: ready('True', REASONS.ready, `store ${resource.spec.store} exists`) };
    if (resource.kind === 'BackupStore') {
      const result = await probeBucket(await storeAccess(db, deps.secrets, resource), resource.spec.readOnly ?? false, timeoutMs);
      return { condition: fromProbe(result, `bucket ${resource.spec.s3.bucket} answers and the encryption settings are valid`) };
    }
    const target = resource;
    if (target.spec.suspend) return { condition: ready('False', REASONS.suspended, 'suspended: scheduled backups are paused') };
    const engine = target.spec.engine === 'mysql' ? 'mysql' : 'postgres';
    const port = target.spec.endpoint.port ?? DEFAULT_ENGINE_PORTS[engine];
    const credentials = await databaseCredentials(db, deps.secrets, target);
    const probe = { engine, host: target.spec.endpoint.host, port, ...credentials, databases: target.spec.databases ?? ['*'] } as const;
    const result = await probeDatabase(probe, timeoutMs);
    const condition = fromProbe(result, `connected to ${engine} ${target.spec.endpoint.host}:${port} as ${credentials.username}`);
    return result.ok ? { condition, replication: await replicationRights(probe, timeoutMs) } : { condition };
  }

  async function lastBackup(tx: Tx, target: Change): Promise<ConditionInput[]> {
    const run = await tx.backup.findFirst({
      where: { namespace: target.namespace, targetName: target.name, phase: { in: [BACKUP_PHASES.succeeded, BACKUP_PHASES.failed] } },
      orderBy: { completedAt: { sort: 'desc', nulls: 'last' } },
    });
    const condition = run ? lastBackupCondition(run) : undefined;
    return condition ? [condition] : [];
  }

  async function checkNow(change: Change): Promise<void> {
    const resource = await resources.get(db, change.kind as StoredKind, change.namespace, change.name);
    if (!resource) {
      checkedAt.delete(keyOf(change));
      return;
    }
    const { condition, replication } = await readiness(resource);
    const now = deps.clock();
    const generation = resource.metadata.generation;
    const result = await resources.updateStatus(db, resource.kind, change.namespace, change.name, async (current, tx) => {
      // The spec changed while this check waited on the network: the check of the new spec writes instead.
      if (current.metadata.generation !== generation) return current.status;
      const extra = resource.kind === 'BackupStore' ? { lastCheckTime: now.toISOString() } : replication !== undefined ? { pitr: pitrStatus(current.status.pitr, replication, now) } : {};
      const backup = resource.kind === 'BackupTarget' ? await lastBackup(tx, change) : [];
      const target = typed(resource);
      const previews = target.kind === 'BackupTarget' ? previewsCondition(target, current.status) : [];
      return { ...withConditions({ ...current.status, ...extra }, [condition, ...backup, ...previews], generation, now), observedGeneration: generation };
    });
    checkedAt.set(keyOf(change), now.getTime());
    if (result && headline(result.before) !== headline(result.after)) await announce(resource, result.after);
  }

  async function announce(resource: StoredResource, status: Record<string, unknown>): Promise<void> {
    const version = Number(await bumpCatalogVersion(db));
    const { namespace, name } = resource.metadata;
    const phase = String(status.phase ?? '');
    const message = String(status.message ?? '');
    if (resource.kind === 'BackupTarget') deps.notify({ kind: 'target', namespace, name, phase, stage: '', message, bytes: 0, version });
    else deps.notify({ kind: 'catalog', namespace, name, phase, stage: '', message: `${resource.kind} ${namespace}/${name} is ${phase}${message ? `: ${message}` : ''}`, bytes: 0, version });
  }

  /** Checks of one resource run one after the other; a failure is logged, never thrown at the caller. */
  function check(change: Change, skip?: (change: Change) => boolean): Promise<void> {
    const key = keyOf(change);
    const next = (running.get(key) ?? Promise.resolve())
      .then(() => (skip?.(change) ? undefined : checkNow(change)))
      .catch((error: unknown) => deps.log.error({ err: error, resource: key }, 'could not update the status'));
    running.set(key, next);
    void next.finally(() => {
      if (running.get(key) === next) running.delete(key);
    });
    return next;
  }

  /** `skip`, asked when a check's turn comes, lets one go that another made pointless meanwhile. */
  async function checkAll(changes: Change[], skip?: (change: Change) => boolean): Promise<void> {
    const queue = [...changes];
    const worker = async () => {
      for (let change = queue.shift(); change; change = queue.shift()) await check(change, skip);
    };
    await Promise.all(Array.from({ length: Math.min(deps.concurrency ?? 4, queue.length) }, worker));
  }

  function isDue(resource: StoredResource, now: number): boolean {
    const at = checkedAt.get(keyOf(changeOf(resource)));
    return at === undefined || resource.status.observedGeneration !== resource.metadata.generation || Math.abs(now - at) >= recheckMs;
  }

  return {
    /** Checks the resources these changes may concern (the changed ones and every resource naming them). */
    async afterChange(changes: Change[]): Promise<void> {
      await checkAll(affectedBy(await resources.list(db), changes).map(changeOf));
    },
    /**
     * The scheduler's tick: checks what changed since its last check, was never checked, or was checked long ago.
     * A call during a pass makes one more pass after it, and resolves once that one is done.
     */
    refreshDue(): Promise<void> {
      if (pass) {
        again = true;
        return pass;
      }
      pass = (async () => {
        do {
          again = false;
          const now = deps.clock().getTime();
          const due = (await resources.list(db)).filter((r) => isDue(r, now)).map(changeOf);
          // A resource checked after this pass found it due (an apply's check it queued behind) is not checked again:
          // that later check would only read the world once more, before its interval.
          const seen = new Map(due.map((change) => [keyOf(change), checkedAt.get(keyOf(change))]));
          await checkAll(due, (change) => checkedAt.get(keyOf(change)) !== seen.get(keyOf(change)));
        } while (again);
      })()
        .catch((error: unknown) => deps.log.error({ err: error }, 'status pass failed'))
        .finally(() => (pass = undefined));
      return pass;
    },
    /** What an apply's stores, policies and targets name that is missing or unusable (document numbers count from 1). */
    async warningsFor(items: AppliedItem[]): Promise<ApplyWarning[]> {
      const warnings: ApplyWarning[] = [];
      for (const [index, item] of items.entries()) {
        if (!STORED_KINDS.includes(item.kind as StoredKind)) continue;
        const resource = await resources.get(db, item.kind as StoredKind, item.namespace, item.name);
        if (!resource) continue;
        for (const problem of await referenceProblems(db, deps, resource)) {
          warnings.push({ document: index + 1, kind: item.kind, namespace: item.namespace, name: item.name, path: problem.path, message: problem.message });
        }
      }
      return warnings;
    },
    /** Resolves once no check is running (the catalog stops after it). */
    async idle(): Promise<void> {
      await Promise.allSettled([pass, ...running.values()]);
    },
  };
}

export type StatusWriter = ReturnType<typeof createStatusWriter>;

/** `status.pitr` with the latest replication check: what is missing and how to fix it, or neither once allowed. */
function pitrStatus(previous: unknown, rights: ReplicationRights, now: Date): Record<string, unknown> {
  const { replicationDenied: _d, replicationFix: _f, ...rest } = (previous ?? {}) as Record<string, unknown>;
  return { ...rest, replicationCheckedAt: now.toISOString(), ...(rights ? { replicationDenied: rights.denied, replicationFix: rights.fix } : {}) };
}

function ready(status: ConditionInput['status'], reason: string, message: string): ConditionInput {
  return { type: CONDITION.ready, status, reason, message };
}

function fromProbe(result: ProbeResult, success: string): ConditionInput {
  return result.ok ? ready('True', REASONS.ready, success) : ready('False', result.reason, result.message);
}

/** What listeners care about: the phase, the message and each condition's status. */
function headline(status: Record<string, unknown>): string {
  const conditions = ((status.conditions ?? []) as ResourceCondition[]).map((c) => `${c.type}=${c.status}`).sort();
  return JSON.stringify([status.phase ?? '', status.message ?? '', conditions]);
}
