import { isRestorable, type TimeRange } from '../../components/timeline/model.ts';

/**
 * What a restore to a moment would give, as far as the target's windows and full backups tell (the plan the server
 * computes is the last word): the API restores exactly inside a change-capture window, refuses a moment outside every
 * window (422, never an earlier state in silence), and without change capture takes the newest full at or before.
 */
export type Verdict =
  | { kind: 'exact' }
  | { kind: 'full'; backupAt: number }
  | { kind: 'outside'; before?: number; after?: number }
  | { kind: 'nothing' };

/** `fulls`: the consistent-at times of the target's restorable full backups (any order). */
export function verdictOf(at: number, windows: readonly TimeRange[], fulls: readonly number[]): Verdict {
  if (windows.length > 0) return isRestorable(at, windows) ? { kind: 'exact' } : { kind: 'outside', ...nearestRestorable(at, windows) };
  const before = fulls.filter((t) => t <= at);
  if (before.length > 0) return { kind: 'full', backupAt: Math.max(...before) };
  if (fulls.length > 0) return { kind: 'outside', after: Math.min(...fulls) };
  return { kind: 'nothing' };
}

/**
 * The restorable moments closest to one outside every window: the end of the nearest window before it and the start
 * of the nearest one after it (exact, milliseconds kept: rounding an end down could leave its last commit out).
 * Empty for a moment inside a window.
 */
export function nearestRestorable(at: number, windows: readonly TimeRange[]): { before?: number; after?: number } {
  if (isRestorable(at, windows)) return {};
  let before: number | undefined;
  let after: number | undefined;
  for (const w of windows) {
    if (w.to < at && (before === undefined || w.to > before)) before = w.to;
    if (w.from > at && (after === undefined || w.from < after)) after = w.from;
  }
  return { ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) };
}

/** What `latest` restores to: the end of the newest window, else the newest full backup; undefined before any. */
export function latestMoment(windows: readonly TimeRange[], fulls: readonly number[]): number | undefined {
  if (windows.length > 0) return Math.max(...windows.map((w) => w.to));
  return fulls.length > 0 ? Math.max(...fulls) : undefined;
}
