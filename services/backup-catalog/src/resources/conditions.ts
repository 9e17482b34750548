import type { ResourceCondition } from '@sigil/proto/resources';
import type { DbOrTx } from '../db.ts';
import type { ResourceRepository } from './resources.ts';

/**
 * Kubernetes-style conditions of the stored resources and the phase and message they sum up to
 * (docs/strata-resources.md, "Status"). Every writer of a condition goes through `withConditions`,
 * so the phase and message never disagree with the conditions.
 */
export const CONDITION = {
  ready: 'Ready',
  lastBackupSucceeded: 'LastBackupSucceeded',
  scheduled: 'Scheduled',
  mirrored: 'Mirrored',
  /** BackupTarget: whether masked row previews are made (False: asked for, not built for the engine). */
  previews: 'Previews',
} as const;

export const RESOURCE_PHASES = { ready: 'Ready', notReady: 'NotReady', suspended: 'Suspended' } as const;

/** Why Ready is False (or True), as short CamelCase words a script can match on. */
export const REASONS = {
  ready: 'Ready',
  policyNotFound: 'PolicyNotFound',
  storeNotFound: 'StoreNotFound',
  secretNotFound: 'SecretNotFound',
  unreachable: 'Unreachable',
  authFailed: 'AuthFailed',
  databaseNotFound: 'DatabaseNotFound',
  suspended: 'Suspended',
  unsupportedEngine: 'UnsupportedEngine',
  bucketUnreachable: 'BucketUnreachable',
  bucketMissing: 'BucketMissing',
  invalidEndpoint: 'InvalidEndpoint',
  invalidRecipient: 'InvalidRecipient',
  invalidIdentity: 'InvalidIdentity',
  backupSucceeded: 'BackupSucceeded',
  backupFailed: 'BackupFailed',
} as const;

export type ConditionStatus = ResourceCondition['status'];

export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

const MAX_MESSAGE = 4096;

/**
 * Sets one condition as Kubernetes' meta.SetStatusCondition does: `lastTransitionTime` moves only when the
 * condition's status changes; reason, message and observedGeneration are always the latest.
 */
export function setStatusCondition(conditions: readonly ResourceCondition[] | undefined, input: ConditionInput, generation: number, now: Date): ResourceCondition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === input.type);
  const previous = index >= 0 ? list[index] : undefined;
  const next: ResourceCondition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message.slice(0, MAX_MESSAGE),
    observedGeneration: generation,
    lastTransitionTime: previous?.status === input.status && previous.lastTransitionTime ? previous.lastTransitionTime : now.toISOString(),
  };
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

export function findCondition(status: Record<string, unknown>, type: string): ResourceCondition | undefined {
  return ((status.conditions ?? []) as ResourceCondition[]).find((c) => c.type === type);
}

/** What a False condition other than Ready adds to the message of a ready resource. */
const NOTES: ReadonlyArray<readonly [string, string]> = [
  [CONDITION.lastBackupSucceeded, 'last backup failed: '],
  [CONDITION.scheduled, ''],
  [CONDITION.mirrored, 'mirroring the store failed: '],
];

/**
 * Phase and message from the conditions: `Ready`; `NotReady` with Ready's message; `Suspended` for a
 * suspended target. A ready resource's message names a failed last backup, a missed schedule or a failed
 * mirror. Undefined until Ready has been computed once.
 */
export function summarize(status: Record<string, unknown>): { phase: string; message: string } | undefined {
  const ready = findCondition(status, CONDITION.ready);
  if (!ready) return undefined;
  if (ready.status !== 'True') {
    return { phase: ready.reason === REASONS.suspended ? RESOURCE_PHASES.suspended : RESOURCE_PHASES.notReady, message: ready.message ?? '' };
  }
  for (const [type, prefix] of NOTES) {
    const condition = findCondition(status, type);
    if (condition?.status === 'False') return { phase: RESOURCE_PHASES.ready, message: `${prefix}${condition.message ?? ''}` };
  }
  return { phase: RESOURCE_PHASES.ready, message: '' };
}

/** The status with these conditions set and its phase and message summed up again. */
export function withConditions(status: Record<string, unknown>, inputs: ConditionInput[], generation: number, now: Date): Record<string, unknown> {
  let conditions = status.conditions as ResourceCondition[] | undefined;
  for (const input of inputs) conditions = setStatusCondition(conditions, input, generation, now);
  const next = { ...status, conditions };
  return { ...next, ...summarize(next) };
}

/** LastBackupSucceeded from a finished run (undefined for one still queued or running). */
export function lastBackupCondition(run: { name: string; phase: string; message: string }): ConditionInput | undefined {
  if (run.phase === 'Succeeded') return { type: CONDITION.lastBackupSucceeded, status: 'True', reason: REASONS.backupSucceeded, message: `backup ${run.name} succeeded` };
  if (run.phase === 'Failed') return { type: CONDITION.lastBackupSucceeded, status: 'False', reason: REASONS.backupFailed, message: run.message || `backup ${run.name} failed without a message` };
  return undefined;
}

/** Records a finished run on its target, in the caller's transaction (the mover's report, a run that could not start). */
export async function recordBackupOutcome(
  conn: DbOrTx,
  resources: ResourceRepository,
  run: { namespace: string; targetName: string; name: string; phase: string; message: string },
  now: Date,
): Promise<void> {
  const condition = lastBackupCondition(run);
  if (!condition) return;
  await resources.updateStatus(conn, 'BackupTarget', run.namespace, run.targetName, (resource) =>
    withConditions(resource.status, [condition], resource.metadata.generation, now),
  );
}
