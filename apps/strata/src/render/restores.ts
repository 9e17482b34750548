// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import type { Schema } from '@strata/client';
import { humanBytes, humanDuration, keyValues, list, table, time } from '../format.ts';
import { nsName, targetRef } from './common.ts';

export function restoreSource(r: Schema<'Restore'>): string {
  const s = r.source ?? {};
  if (s.backupID) return s.backupID;
  if (s.time) return time(s.time);
  return 'latest';
}

export function restores(l: Schema<'RestoreList'>): string {
  const rs = l.restores ?? [];
  if (!rs.length) return 'No restores.\n';
  return table(
    ['restore', 'target', 'mode', 'phase', 'source', 'created', 'duration', 'by'],
    rs.map((r) => [
      nsName(r.namespace, r.name),
      targetRef(r.source?.targetNamespace, r.target),
      r.mode,
      r.phase,
      restoreSource(r),
      time(r.created),
      humanDuration(r.durationSeconds),
      r.requestedBy,
    ]),
  );
}

export function restoreDetail(d: Schema<'RestoreDetail'>): string {
  const r = d.restore ?? {};
  const dest = r.destination ?? {};
  let out = keyValues([
    ['restore', nsName(r.namespace, r.name)],
    ['target', targetRef(r.source?.targetNamespace, r.target)],
    ['mode', r.mode],
    ['phase', r.phase],
    ['message', r.message],
    ['source', restoreSource(r)],
    ['destination', [dest.host, dest.database].filter(Boolean).join('/') || undefined],
    ['tables', dest.tables?.length ? list(dest.tables) : undefined],
    ['sandbox', r.sandbox],
    ['sandbox ttl', dest.sandboxTTL],
    ['requested by', r.requestedBy],
    ['created', time(r.created)],
    ['duration', r.durationSeconds ? humanDuration(r.durationSeconds) : undefined],
    ['plan', r.plan ? planText(r.plan) : undefined],
    ['progress', r.progress ? progressText(r.progress) : undefined],
    ['download URL', r.downloadURL],
    ['download expires', r.downloadExpires ? time(r.downloadExpires) : undefined],
  ]);
  const checks = r.checks ?? [];
  if (checks.length) {
    out += 'checks:\n';
    out += checks.map((c) => `  ${c.passed ? 'PASS' : 'FAIL'}  ${c.name}${c.message ? `: ${c.message}` : ''}\n`).join('');
  }
  return out;
}

export function planText(p: Schema<'RestorePlan'>): string {
  const parts: string[] = [];
  if (p.baseBackupID) parts.push(`base ${p.baseBackupID}`);
  if (p.segments) parts.push(`+${p.segments} segments`);
  if (p.targetTime) parts.push(`to ${time(p.targetTime)}`);
  if (p.bytes) parts.push(humanBytes(p.bytes));
  if (p.message) parts.push(`(${p.message})`);
  return parts.join(' ') || '-';
}

export function progressText(p: Schema<'Progress'>): string {
  const bytes = p.totalBytes ? `${humanBytes(p.bytes ?? 0)} of ${humanBytes(p.totalBytes)}` : p.bytes ? humanBytes(p.bytes) : '';
  return [p.stage, bytes].filter(Boolean).join(' ') || '-';
}

/** A restore plan: what restoring to a moment takes, or why it cannot be done. */
export function plan(p: Schema<'Plan'>): string {
  const windows = (p.windows ?? []).map((w) => `${time(w.from)} .. ${time(w.to)}`);
  let out = keyValues([
    ['restorable', p.restorable ?? false],
    ['reason', p.reason],
    ['target time', p.targetTime],
    ['effective time', p.effectiveTime],
    ['base backup', p.baseBackupID],
    ['base time', p.baseTime ? time(p.baseTime) : undefined],
    ['segments', p.segments],
    ['bytes', p.bytes !== undefined ? humanBytes(p.bytes) : undefined],
  ]);
  if (windows.length) out += `restore windows:\n${windows.map((w) => `  ${w}\n`).join('')}`;
  return out;
}
