// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import type { Schema } from '@strata/client';
import { cell, flags, humanBytes, humanDuration, keyValues, list, table, time } from '../format.ts';
import { backupFlags } from './backups.ts';
import { nsName } from './common.ts';

type Target = Schema<'Target'>;

export function pitrCell(t: Target): string {
  if (!t.pitr) return 'off';
  if (t.chainBroken) return 'broken';
  return typeof t.lagSeconds === 'number' ? `lag ${humanDuration(t.lagSeconds)}` : 'on';
}

export function targetFlags(t: Target): string {
  return flags([
    [t.suspended, 'suspended'],
    [t.running, 'running'],
    [t.chainBroken, 'chain-broken'],
    [t.onlyInStore, 'only-in-store'],
    [t.replicationDenied, 'replication-denied'],
    [t.gaps, `gaps:${t.gaps}`],
  ]);
}

export function targets(l: Schema<'TargetList'>): string {
  const ts = l.targets ?? [];
  if (!ts.length) return 'No targets.\n';
  return table(
    ['target', 'engine', 'env', 'health', 'last success', 'next run', 'backups', 'stored', 'pitr', 'flags'],
    ts.map((t) => [
      nsName(t.namespace, t.name),
      t.engine,
      t.env,
      t.health,
      time(t.lastSuccess),
      time(t.nextRun),
      t.backups,
      humanBytes(t.storedBytes),
      pitrCell(t),
      targetFlags(t),
    ]),
  );
}

export function targetDetail(d: Schema<'TargetDetail'>): string {
  const t = d.target;
  const windows = (t.windows ?? []).map((w) => `${time(w.from)} .. ${time(w.to)}`);
  let out = keyValues([
    ['target', nsName(t.namespace, t.name)],
    ['engine', t.engine],
    ['org', t.org],
    ['project', t.project],
    ['env', t.env],
    ['policy', t.policy],
    ['store', t.store],
    ['phase', t.phase],
    ['health', t.healthReason ? `${cell(t.health)} (${t.healthReason})` : t.health],
    ['message', t.message],
    ['suspended', t.suspended ?? false],
    ['running', t.running],
    ['last success', time(t.lastSuccess)],
    ['last full', t.lastFull ? [t.lastFull.id ?? t.lastFull.name, t.lastFull.phase].filter(Boolean).join(' ') : undefined],
    ['next run', time(t.nextRun)],
    ['last verification', t.lastVerification ? time(t.lastVerification) : undefined],
    ['backups', t.backups],
    ['segments', t.segments],
    ['stored', humanBytes(t.storedBytes)],
    ['pitr', pitrCell(t)],
    ['gaps', t.gaps || undefined],
    ['only in store', t.onlyInStore ? true : undefined],
    ['replication denied', t.replicationDenied],
    ['replication fix', t.replicationFix],
  ]);
  if (windows.length) out += `restore windows:\n${windows.map((w) => `  ${w}\n`).join('')}`;
  return out;
}

/** A target's runs with their phase: only a restorable one shows a stored size, and a failed one its error. */
export function backups(l: Schema<'BackupList'>): string {
  const bs = l.backups ?? [];
  if (!bs.length) return `No backups${l.target ? ` of ${l.target}` : ''}.\n`;
  let out = table(
    ['id', 'phase', 'time', 'databases', 'stored', 'duration', 'retained by', 'until', 'flags'],
    bs.map((b) => [
      b.id,
      b.phase,
      time(b.time),
      list(b.databases, 3),
      b.restorable ? humanBytes(b.storedBytes) : '-',
      humanDuration(b.durationSeconds),
      retainedText(b),
      untilText(b),
      backupFlags(b),
    ]),
  );
  const failed = bs.filter((b) => b.phase === 'Failed');
  if (failed.length) out += `\nFailed runs (not restorable; \`strata backup ID\` shows the whole message):\n${failed.map((b) => `  ${b.id}: ${firstLine(b.error)}\n`).join('')}`;
  const expired = bs.filter((b) => b.phase === 'Expired');
  if (expired.length) out += `\nExpired by retention (not restorable; their objects go at the store's next garbage collection):\n${expired.map((b) => `  ${b.id}: ${b.expiredReason ?? 'kept by no rule'}\n`).join('')}`;
  return out;
}

/** Why retention keeps a backup; `-` for runs the rules do not judge (not succeeded) or no longer keep. */
export function retainedText(b: Schema<'Backup'>): string {
  return b.retainedBy?.length ? b.retainedBy.join(',') : '-';
}

/** Until when the rules keep it (a pin: its end; `newest` alone: no end), when it expired, or when a postponed run tries again. */
export function untilText(b: Schema<'Backup'>): string {
  if (b.phase === 'Expired') return b.expiredAt ? `expired ${time(b.expiredAt)}` : 'expired';
  if (b.phase === 'Postponed') return b.postponedUntil ? `retry ${time(b.postponedUntil)}` : '-';
  if (b.expiresAt) return time(b.expiresAt);
  if (b.retainedBy?.includes('pinned')) return b.pinExpires ? `pin ${time(b.pinExpires)}` : 'pinned, no end';
  return b.retainedBy?.length ? 'no end' : '-';
}

function firstLine(text: string | undefined): string {
  const lines = (text ?? '').split('\n').filter((l) => l.trim());
  return lines.length > 1 ? `${lines[0]} (…)` : (lines[0] ?? '-');
}
