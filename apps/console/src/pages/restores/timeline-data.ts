import type { TimeRange, TimelineData } from '../../components/timeline/model.ts';
import type { TargetTimeline, WizardTarget } from './wizard-queries.ts';

const time = (value: string) => Date.parse(value);

/** The GraphQL timeline as the Timeline draws it (epoch ms); only succeeded backups: the picker is about restoring. */
export function timelineDataOf(timeline: TargetTimeline): TimelineData {
  return {
    windows: timeline.windows.map(rangeOf),
    backups: timeline.backups
      .filter((b) => b.phase === 'Succeeded')
      .map((b) => ({ id: b.id, at: time(b.time), verified: b.verified, verifyFailed: b.verifyFailed, pinned: b.pinned, mode: b.mode })),
    spans: timeline.segmentSpans.map((s) => ({ from: time(s.firstTime), to: time(s.lastTime), segments: s.segments, commits: s.commits, partial: s.partial })),
    verifications: timeline.verifications.map((v) => ({ at: time(v.at), passed: v.passed, backupId: v.backupID })),
    breaks: timeline.breaks.flatMap((b) => {
      const at = b.from ?? b.to;
      return at ? [{ at: time(at), reason: b.reason }] : [];
    }),
  };
}

export const rangeOf = (w: { from: string; to: string }): TimeRange => ({ from: time(w.from), to: time(w.to) });

/** The consistent-at times of the target's succeeded backups: what a restore without change capture can give. */
export function restorableFulls(target: Pick<WizardTarget, 'backups'>): number[] {
  return target.backups.flatMap((b) => (b.phase === 'Succeeded' && b.time ? [time(b.time)] : []));
}

/** A first view around a moment given in the link: an hour either side, inside the whole history. */
export function viewAround(at: number, limit: TimeRange): TimeRange {
  const half = Math.min(3_600_000, (limit.to - limit.from) / 2);
  const from = Math.max(limit.from, Math.min(at - half, limit.to - 2 * half));
  return { from, to: from + 2 * half };
}
