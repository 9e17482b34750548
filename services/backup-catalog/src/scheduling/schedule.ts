import { createHash } from 'node:crypto';
import { CronExpressionParser } from 'cron-parser';
import { parseDuration } from '@sigil/proto/units';
import type { BackupPolicySpec as PolicySpec } from '@sigil/proto/resources';

/** The schedule of a target's full backups: the policy's cron in its time zone, shifted by the target's jitter. */
export interface Schedule {
  /** First slot strictly after `after` (without jitter). */
  slotAfter(after: Date): Date;
  /** Latest slot at or before `at` (without jitter), if any within the past year. */
  slotAtOrBefore(at: Date): Date | undefined;
  jitterMs: number;
  startingDeadlineMs: number;
}

/** A fixed offset in [0, jitter) derived from the target's uid: replicas and restarts agree on it. */
export function jitterFor(uid: string, jitter: string | undefined): number {
  if (!jitter) return 0;
  const max = parseDuration(jitter);
  if (max <= 0) return 0;
  const fraction = createHash('sha256').update(uid).digest().readUInt32BE(0) / 2 ** 32;
  return Math.floor(fraction * max);
}

export function scheduleFor(policy: PolicySpec, targetUid: string): Schedule {
  const { schedule, timeZone = 'UTC', jitter, startingDeadline = '6h' } = policy.full;
  return cronSchedule(schedule, timeZone, jitterFor(targetUid, jitter), parseDuration(startingDeadline));
}

/** The schedule of a target's verification restores (`verify.schedule`, in `verify.timeZone` or the full's), when set. */
export function verifyScheduleFor(policy: PolicySpec, targetUid: string): Schedule | undefined {
  const verify = policy.verify;
  if (!verify?.schedule) return undefined;
  const { timeZone = 'UTC', jitter, startingDeadline = '6h' } = policy.full;
  return cronSchedule(verify.schedule, verify.timeZone ?? timeZone, jitterFor(targetUid, jitter), parseDuration(startingDeadline));
}

function cronSchedule(cron: string, timeZone: string, jitterMs: number, startingDeadlineMs: number): Schedule {
  const parse = (currentDate: Date) => CronExpressionParser.parse(cron, { currentDate, tz: timeZone });
  return {
    slotAfter: (after) => parse(after).next().toDate(),
    slotAtOrBefore: (at) => {
      try {
        const slot = parse(new Date(at.getTime() + 1)).prev().toDate();
        return at.getTime() - slot.getTime() <= 366 * 86_400_000 ? slot : undefined;
      } catch {
        return undefined;
      }
    },
    jitterMs,
    startingDeadlineMs,
  };
}

export type Decision =
  | { due: false; nextRun: Date }
  | { due: true; slot: Date; run: boolean; nextRun: Date };

/**
 * What the scheduler should do now, given the last slot it handled. Several missed slots collapse into
 * the latest one, which runs only if it is not older than startingDeadline.
 */
export function decide(schedule: Schedule, lastSlot: Date, now: Date): Decision {
  const first = schedule.slotAfter(lastSlot);
  if (first.getTime() + schedule.jitterMs > now.getTime()) return { due: false, nextRun: new Date(first.getTime() + schedule.jitterMs) };
  const latest = schedule.slotAtOrBefore(new Date(now.getTime() - schedule.jitterMs)) ?? first;
  const slot = latest.getTime() < first.getTime() ? first : latest;
  const lateness = now.getTime() - (slot.getTime() + schedule.jitterMs);
  const next = schedule.slotAfter(slot);
  return { due: true, slot, run: lateness <= schedule.startingDeadlineMs, nextRun: new Date(next.getTime() + schedule.jitterMs) };
}

/** The usual gap between two runs, for staleness. */
export function typicalIntervalMs(schedule: Schedule, from: Date): number {
  const a = schedule.slotAfter(from);
  const b = schedule.slotAfter(a);
  return b.getTime() - a.getTime();
}
