// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import type { Schema } from '@strata/client';
import { flags, humanBytes, humanDuration, keyValues, list, table, time } from '../format.ts';
import { targetRef } from './common.ts';

type Backup = Schema<'Backup'>;
type Tags = Schema<'Tags'>;

export function backupFlags(b: Backup): string {
  return flags([
    [b.pinned, 'pinned'],
    [b.verified, 'verified'],
    [b.verifyFailed, 'verify-failed'],
    [b.warnings?.length, `warnings:${b.warnings?.length}`],
  ]);
}

export function backupDetail(d: Schema<'BackupDetail'>): string {
  const { backup: b, tags, manifest: m } = d;
  const ratio = b.rawBytes && b.storedBytes ? ` (${(b.rawBytes / b.storedBytes).toFixed(1)}x)` : '';
  let out = keyValues([
    ['id', b.id],
    ['phase', phaseText(b)],
    ['target', targetRef(m.target?.namespace, b.target)],
    ['engine', b.engine],
    ['mode', b.mode],
    ['server version', b.serverVersion],
    ['consistent at', time(b.time)],
    ['completed', time(b.completed)],
    ['duration', humanDuration(b.durationSeconds)],
    ['raw size', humanBytes(b.rawBytes)],
    ['stored size', `${humanBytes(b.storedBytes)}${ratio}`],
    ['databases', list(b.databases)],
    ['tables', b.tables],
    ['rows (estimate)', b.rowsEstimate],
    ['schema hash', b.schemaHash],
    ['migration', b.migrationVersion],
    ['position', b.position],
    ['tiers', b.tiers?.length ? list(b.tiers) : undefined],
    ['store', b.store],
    ['reason', b.reason],
    ['pinned', (tags.pinned ?? b.pinned) ? pinText(tags, b) : false],
    ['retained by', b.retainedBy?.length ? b.retainedBy.join(', ') : undefined],
    ['kept until', b.expiresAt ? time(b.expiresAt) : b.retainedBy?.length ? 'no end (a pin or the newest backup)' : undefined],
    ['expired', b.expiredAt ? `${time(b.expiredAt)}${b.expiredReason ? ` (${b.expiredReason})` : ''}` : undefined],
    ['postponed', b.postpones ? `${b.postpones} time(s)${b.postponedUntil ? `, next try ${time(b.postponedUntil)}` : ''}` : undefined],
    ['verified', (tags.verified ?? b.verified) ? verifiedText(tags) : false],
    ['verify failed', (tags.verifyFailed ?? b.verifyFailed) ? true : undefined],
    ['objects', m.objects?.length],
  ]);
  const warnings = b.warnings ?? [];
  if (warnings.length) out += `warnings:\n${warnings.map((w) => `  - ${w}\n`).join('')}`;
  if (b.error) out += `error (the tool's or the store's own message):\n${b.error.split('\n').map((l) => `  ${l}\n`).join('')}`;
  return out;
}

function phaseText(b: Backup): string | undefined {
  if (!b.phase) return undefined;
  if (b.restorable) return `${b.phase} (restorable)`;
  if (b.phase === 'Expired') return `${b.phase} (not restorable: retention expired it)`;
  return `${b.phase} (not restorable${b.phase === 'Failed' ? '' : ' until it succeeds'})`;
}

export function pinText(tags: Tags, b: Backup): string {
  const reason = tags.pinReason ?? b.pinReason;
  const parts = ['yes'];
  if (tags.pinnedBy) parts.push(`by ${tags.pinnedBy}`);
  parts.push(tags.pinExpires ? `until ${time(tags.pinExpires)}` : 'forever');
  const synced = (tags.pinSynced ?? b.pinSynced) === false ? '; not yet in the store (a catalog rebuilt from the store would not know it)' : '';
  return parts.join(' ') + (reason ? ` (${reason})` : '') + synced;
}

function verifiedText(tags: Tags): string {
  const at = tags.verifiedAt ? ` at ${time(tags.verifiedAt)}` : '';
  const rto = typeof tags.verifyRTOSeconds === 'number' ? `, RTO ${humanDuration(tags.verifyRTOSeconds)}` : '';
  return `yes${at}${rto}`;
}

export function inventory(inv: Schema<'Inventory'>): string {
  const server = inv.server;
  let out = keyValues([
    ['collected', time(inv.collectedAt)],
    ['engine', inv.engine],
    ['server', [server.version, server.host].filter(Boolean).join(' on ') || undefined],
    ['schema hash', inv.schemaHash],
  ]);
  const notes = inv.notes ?? [];
  if (notes.length) out += `notes:\n${notes.map((n) => `  - ${n}\n`).join('')}`;
  out += '\n';
  out += inv.databases.length
    ? table(
        ['database', 'size', 'tables', 'migration', 'schema hash'],
        inv.databases.map((d) => [d.name, humanBytes(d.sizeBytes), d.tables.length, d.migrationVersion, d.schemaHash]),
      )
    : 'No databases.\n';
  const rows = inv.databases.flatMap((d) =>
    d.tables.map((t) => [
      d.name,
      t.schema ? `${t.schema}.${t.name}` : t.name,
      t.kind,
      t.exactRows ?? t.rowsEstimate,
      humanBytes(t.totalBytes),
      t.columns.length,
    ]),
  );
  if (rows.length) out += '\n' + table(['database', 'table', 'kind', 'rows', 'size', 'columns'], rows);
  return out;
}

/** A garbage collection pass: what went (or would go), and the error it stopped at. */
export function gcResult(r: Schema<'GcResult'>): string {
  const verb = r.dryRun ? 'would delete' : 'deleted';
  const waiting = r.waiting ? `; ${r.waiting} too recent, left for a later pass` : '';
  let out = `store ${r.store}: ${verb} ${r.objects} object(s), ${humanBytes(r.bytes)}${r.kept !== undefined ? `; ${r.kept} kept` : ''}${waiting}\n`;
  if (r.keys.length) out += r.keys.map((k) => `  ${k}\n`).join('') + (r.truncated ? `  … and ${r.objects - r.keys.length} more\n` : '');
  if (r.error) out += `stopped at an error (what was deleted before it stays deleted): ${r.error}\n`;
  return out;
}
