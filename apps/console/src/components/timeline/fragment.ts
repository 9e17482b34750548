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

/** How far past the answer's end (the server's now) the newest window's end may still stretch the view. */
export const WINDOW_END_SLACK_MS = 5_000;

/**
 * The whole history an answer covers: a margin before its start so the first mark is not on the edge, and an end at
 * now (the answer's `to`), or at the newest window's end when that is later, by at most WINDOW_END_SLACK_MS (a
 * window ends at the newest change the log has seen, which another clock may put a moment after now).
 */
export function historyRange(timeline: Pick<TimelineParts, 'from' | 'to'> & { windows?: ReadonlyArray<{ to: string }> }): TimeRange {
  const { from, to } = rangeOf(timeline);
  const newestWindowEnd = Math.max(...(timeline.windows ?? []).map((w) => time(w.to)), to);
  const margin = Math.max(60_000, (to - from) * 0.02);
  return { from: from - margin, to: Math.min(newestWindowEnd, to + WINDOW_END_SLACK_MS) };
}
