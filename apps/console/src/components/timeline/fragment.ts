import { graphql } from '../../gql';
import type { TimelinePartsFragment as TimelineParts } from '../../gql/graphql.ts';
import type { TimeRange, TimelineData } from './model.ts';

/** What a Timeline draws, as every query that feeds one asks for it (the target page, the restore wizard). */
export const TimelinePartsDocument = graphql(`
  fragment TimelineParts on TargetTimeline {
    from
    to
    windows {
      from
      to
    }
    backups {
      id
      time
      phase
      mode
      verified
      verifyFailed
      pinned
    }
    verifications {
      backupID
      at
      passed
    }
    segmentSpans {
      firstTime
      lastTime
      segments
      commits
      partial
    }
    breaks {
      kind
      from
      to
      reason
    }
  }
`);

const time = (value: string) => Date.parse(value);

/** A GraphQL time range as the Timeline draws it (epoch ms). */
export const rangeOf = (w: { from: string; to: string }): TimeRange => ({ from: time(w.from), to: time(w.to) });

/** The GraphQL timeline as the Timeline draws it (epoch ms); only succeeded backups (a failed run restores nothing). */
export function timelineDataOf(timeline: TimelineParts): TimelineData {
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

/** The whole history an answer covers, a little wider so the first and last marks are not on the edge. */
export function historyRange(timeline: Pick<TimelineParts, 'from' | 'to'>): TimeRange {
  const { from, to } = rangeOf(timeline);
  const margin = Math.max(60_000, (to - from) * 0.02);
  return { from: from - margin, to: to + margin };
}
