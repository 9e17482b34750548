import type { TimeRange, TimelineData } from '../../components/timeline/model.ts';

/** The timeline's part of the GraphQL answer (TargetTimeline), as the page reads it. */
export interface TimelineAnswer {
  from: string;
  to: string;
  windows: ReadonlyArray<{ from: string; to: string }>;
  backups: ReadonlyArray<{ id: string; time: string; phase: string; mode: string; verified: boolean; verifyFailed: boolean; pinned: boolean }>;
  verifications: ReadonlyArray<{ backupID: string; at: string; passed: boolean }>;
  segmentSpans: ReadonlyArray<{ firstTime: string; lastTime: string; segments: number; commits: number; partial: boolean }>;
  breaks: ReadonlyArray<{ kind: string; from?: string | null; to?: string | null; reason: string }>;
}

const ms = (text: string) => Date.parse(text);

/** What the Timeline draws: full backups that succeeded (a failed run restores nothing), in epoch milliseconds. */
export function timelineDataOf(answer: TimelineAnswer): TimelineData {
  return {
    windows: answer.windows.map((w) => ({ from: ms(w.from), to: ms(w.to) })),
    backups: answer.backups.filter((b) => b.phase === 'Succeeded').map((b) => ({ id: b.id, at: ms(b.time), mode: b.mode, verified: b.verified, verifyFailed: b.verifyFailed, pinned: b.pinned })),
    spans: answer.segmentSpans.map((s) => ({ from: ms(s.firstTime), to: ms(s.lastTime), segments: s.segments, commits: s.commits, partial: s.partial })),
    verifications: answer.verifications.map((v) => ({ at: ms(v.at), passed: v.passed, backupId: v.backupID })),
    breaks: answer.breaks.flatMap((b) => (b.from ? [{ at: ms(b.from), reason: b.reason }] : [])),
  };
}

/** The whole history the answer covers, a little wider so the first and last marks are not on the edge. */
export function historyRange(answer: Pick<TimelineAnswer, 'from' | 'to'>): TimeRange {
  const from = ms(answer.from);
  const to = ms(answer.to);
  const margin = Math.max(60_000, (to - from) * 0.02);
  return { from: from - margin, to: to + margin };
}
