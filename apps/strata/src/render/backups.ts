// Text renderings of the console API objects (docs/strata-api.md, spec part 2.1).
import { flags, humanBytes, humanDuration, keyValues, list, table, time } from '../format.ts';
import type { Obj } from './common.ts';
import { arr } from './common.ts';

export function backupFlags(b: Obj): string {
  return flags([
    [b.pinned, 'pinned'],
    [b.verified, 'verified'],
    [b.verifyFailed, 'verify-failed'],
    [b.warnings?.length, `warnings:${b.warnings?.length}`],
  ]);
}

export function backupDetail(d: Obj): string {
  const b: Obj = d.backup ?? {};
  const tags: Obj = d.tags ?? {};
  const m: Obj = d.manifest ?? {};
  const ratio = b.rawBytes && b.storedBytes ? ` (${(b.rawBytes / b.storedBytes).toFixed(1)}x)` : '';
  let out = keyValues([
    ['id', b.id],
    ['target', b.target],
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
    ['verified', (tags.verified ?? b.verified) ? `yes${tags.verifiedAt ? ` at ${time(tags.verifiedAt)}` : ''}${typeof tags.verifyRTOSeconds === 'number' ? `, RTO ${humanDuration(tags.verifyRTOSeconds)}` : ''}` : false],
    ['verify failed', (tags.verifyFailed ?? b.verifyFailed) ? true : undefined],
    ['objects', Array.isArray(m.objects) ? m.objects.length : undefined],
  ]);
  const warnings: unknown[] = Array.isArray(b.warnings) ? b.warnings : [];
  if (warnings.length) out += `warnings:\n${warnings.map((w) => `  - ${String(w)}\n`).join('')}`;
  return out;
}

export function pinText(tags: Obj, b: Obj): string {
  const reason = tags.pinReason ?? b.pinReason;
  const parts = ['yes'];
  if (tags.pinnedBy) parts.push(`by ${tags.pinnedBy}`);
  parts.push(tags.pinExpires ? `until ${time(tags.pinExpires)}` : 'forever');
  return parts.join(' ') + (reason ? ` (${reason})` : '');
}

export function inventory(inv: Obj): string {
  const server: Obj = inv.server ?? {};
  const dbs = arr(inv.databases);
  let out = keyValues([
    ['collected', time(inv.collectedAt)],
    ['engine', inv.engine],
    ['server', [server.version, server.host].filter(Boolean).join(' on ') || undefined],
    ['schema hash', inv.schemaHash],
  ]);
  const notes: unknown[] = Array.isArray(inv.notes) ? inv.notes : [];
  if (notes.length) out += `notes:\n${notes.map((n) => `  - ${String(n)}\n`).join('')}`;
  out += '\n';
  out += dbs.length
    ? table(
        ['database', 'size', 'tables', 'migration', 'schema hash'],
        dbs.map((d) => [d.name, humanBytes(d.sizeBytes), arr(d.tables).length, d.migrationVersion, d.schemaHash]),
      )
    : 'No databases.\n';
  const rows: Array<Array<string | number | undefined>> = [];
  for (const d of dbs) {
    for (const t of arr(d.tables)) {
      rows.push([
        d.name,
        t.schema ? `${t.schema}.${t.name}` : t.name,
        t.kind,
        t.exactRows ?? t.rowsEstimate,
        humanBytes(t.totalBytes),
        Array.isArray(t.columns) ? t.columns.length : undefined,
      ]);
    }
  }
  if (rows.length) out += '\n' + table(['database', 'table', 'kind', 'rows', 'size', 'columns'], rows);
  return out;
}
