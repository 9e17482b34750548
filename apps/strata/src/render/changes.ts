// Text rendering of a target's change summaries (getTargetChanges).
import type { Schema } from '@strata/client';
import { table, time } from '../format.ts';

const count = new Intl.NumberFormat('en-US');

/** The segment's time: its last commit, else what it covered, else its upload. */
function segmentTime(s: Schema<'Segment'>): string | undefined {
  return s.lastTime ?? s.firstTime ?? s.uploadedAt;
}

export function changes(summary: Schema<'ChangeSummary'>): string {
  const segments = summary.segments ?? [];
  let out = `Changes of ${summary.target ?? '-'} from ${time(summary.since)} to ${time(summary.at)}:\n`;
  if (!segments.length) return `${out}  (no segments in this range)\n`;
  out += table(
    ['time', 'commits', 'segment', 'changes'],
    segments.map((s) => [time(segmentTime(s)), count.format(s.commits ?? 0), `${s.name ?? '-'}${s.partial ? ' (partial)' : ''}`, s.explanation ?? (s.summaryError ? `no summary: ${s.summaryError}` : '-')]),
  );
  const tables = Object.entries(summary.tables ?? {});
  if (!tables.length) return out;
  out += '\nBy table:\n';
  out += table(
    ['table', 'inserts', 'updates', 'deletes', 'truncates'],
    tables.map(([name, t]) => [name, count.format(t.inserts ?? 0), count.format(t.updates ?? 0), count.format(t.deletes ?? 0), count.format(t.truncates ?? 0)]),
  );
  return out;
}
