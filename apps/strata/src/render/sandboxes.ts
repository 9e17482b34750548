// Text renderings of the sandbox answers of the console API (docs/strata-api.md, "sandboxes").
import type { Schema } from '@strata/client';
import { humanBytes, humanDuration, keyValues, list, table, time } from '../format.ts';

type Sandbox = Schema<'Sandbox'>;

/** A QueryResult as the sandbox service sends it: it also lists the cells that were SQL NULL (shown as ''). */
export type SandboxQueryResult = Schema<'QueryResult'>;

const MESSAGE_WIDTH = 60;

/** `2025-03-01T03:00:00Z` -> "in 3h59m" or "5m ago", measured from `now`. */
export function relativeTime(v: string | undefined, now: number): string {
  const t = v ? Date.parse(v) : Number.NaN;
  if (Number.isNaN(t)) return v || '-';
  const seconds = Math.round((t - now) / 1000);
  return seconds >= 0 ? `in ${humanDuration(seconds)}` : `${humanDuration(-seconds)} ago`;
}

function age(created: string | undefined, now: number): string {
  const t = created ? Date.parse(created) : Number.NaN;
  return Number.isNaN(t) ? '-' : humanDuration(Math.max(0, Math.round((now - t) / 1000)));
}

function truncate(text: string | undefined, width: number): string | undefined {
  if (!text || text.length <= width) return text;
  return `${text.slice(0, width - 1)}…`;
}

export function sandboxes(l: Schema<'SandboxList'>, now = Date.now()): string {
  const ss = l.sandboxes ?? [];
  if (!ss.length) return 'No sandboxes.\n';
  return table(
    ['name', 'target', 'engine', 'phase', 'expires', 'age', 'message'],
    ss.map((s) => [s.name, s.target, s.engine, s.phase, relativeTime(s.expires, now), age(s.created, now), truncate(s.message, MESSAGE_WIDTH)]),
  );
}

function address(s: Sandbox): string | undefined {
  if (!s.host) return undefined;
  return s.port === undefined ? s.host : `${s.host}:${s.port}`;
}

function extensionLine(e: NonNullable<Sandbox['extensions']>[number]): string {
  const granted = e.granted && e.granted !== e.by ? ` (granted ${e.granted})` : '';
  const who = [e.user ? `by ${e.user}` : '', e.at ? `at ${time(e.at)}` : ''].filter(Boolean).join(' ');
  return `  - +${e.by ?? '?'}${granted}${who ? ` ${who}` : ''}${e.reason ? `: ${e.reason}` : ''}\n`;
}

export function sandboxDetail(d: Schema<'SandboxDetail'>, now = Date.now()): string {
  const s = d.sandbox ?? {};
  const databases = s.databases ?? [];
  let out = keyValues([
    ['name', s.name],
    ['target', s.target],
    ['engine', s.engine],
    ['phase', s.phase],
    ['message', s.message],
    ['owner', s.owner],
    ['backup', s.backupID],
    ['time', s.time ? time(s.time) : undefined],
    ['database', s.database],
    ['databases', databases.length > 1 ? list(databases) : undefined],
    ['host:port', address(s)],
    ['in cluster', s.inCluster],
    ['size limit', s.sizeLimit],
    ['used', s.usedBytes !== undefined ? humanBytes(s.usedBytes) : undefined],
    ['created', s.created ? time(s.created) : undefined],
    ['ready', s.ready ? time(s.ready) : undefined],
    ['expires', s.expires ? `${time(s.expires)} (${relativeTime(s.expires, now)})` : undefined],
    ['connect', s.connect],
  ]);
  const extensions = s.extensions ?? [];
  if (extensions.length) out += `extensions:\n${extensions.map(extensionLine).join('')}`;
  return out;
}

/** One line per phase change while waiting: `sandbox orders-sbx-1a2b3c Restoring: restoring the backup`. */
export function sandboxPhaseLine(s: Sandbox): string {
  return `sandbox ${s.name ?? '-'} ${s.phase || '-'}${s.message ? `: ${s.message}` : ''}\n`;
}

function hostInUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

const isMysql = (engine: string | undefined): boolean => engine === 'mysql' || engine === 'mariadb';

/** `postgres://user:pass@host:port/db` (or `mysql://...`); undefined for another engine or without a host. */
export function connectionUrl(c: Schema<'SandboxCredentials'>): string | undefined {
  const scheme = c.engine === 'postgres' ? 'postgres' : isMysql(c.engine) ? 'mysql' : undefined;
  if (!scheme || !c.host) return undefined;
  const user = encodeURIComponent(c.username ?? '');
  const password = c.password ? `:${encodeURIComponent(c.password)}` : '';
  const port = c.port === undefined ? '' : `:${c.port}`;
  return `${scheme}://${user}${password}@${hostInUrl(c.host)}${port}/${encodeURIComponent(c.database ?? '')}`;
}

/** The engine's own client started with these credentials, ready to paste into a shell. */
export function clientCommand(c: Schema<'SandboxCredentials'>): string | undefined {
  if (!c.host) return undefined;
  if (c.engine === 'postgres') return `psql ${shellQuote(connectionUrl(c) ?? '')}`;
  if (!isMysql(c.engine)) return undefined;
  const parts = ['mysql', '-h', c.host];
  if (c.port !== undefined) parts.push('-P', String(c.port));
  if (c.username) parts.push('-u', shellQuote(c.username));
  if (c.password) parts.push(`-p${shellQuote(c.password)}`);
  if (c.database) parts.push(shellQuote(c.database));
  return parts.join(' ');
}

export function sandboxCredentials(c: Schema<'SandboxCredentials'>): string {
  return keyValues([
    ['engine', c.engine],
    ['host', c.host],
    ['port', c.port],
    ['database', c.database],
    ['username', c.username],
    ['password', c.password],
    ['route', c.route],
    ['url', connectionUrl(c)],
    ['shell', clientCommand(c)],
  ]);
}

export function sandboxTables(l: Schema<'TableList'>): string {
  const ts = l.tables ?? [];
  if (!ts.length) return 'No tables.\n';
  return table(
    ['table', 'rows', 'size', 'columns'],
    ts.map((t) => [t.fullName ?? t.name, t.rowsEstimate, humanBytes(t.bytes), t.columns?.length]),
  );
}

function resultCell(v: string | undefined): string {
  return (v ?? '').replace(/\r?\n/g, '\\n').replace(/\t/g, '\\t');
}

function resultHeaders(r: SandboxQueryResult): string[] {
  const masked = new Set(r.masked ?? []);
  return r.columns.map((c) => (masked.has(c) ? `${c} (masked)` : c));
}

function resultRows(r: SandboxQueryResult): string[][] {
  const nulls = new Set((r.nulls ?? []).map(([row, col]) => `${row},${col}`));
  return r.rows.map((row, i) => r.columns.map((_, j) => (nulls.has(`${i},${j}`) ? '' : resultCell(row[j]))));
}

function resultFooter(r: SandboxQueryResult): string {
  const n = r.rows.length;
  const parts = [`${n} ${n === 1 ? 'row' : 'rows'}`];
  if (r.truncated) parts.push('truncated');
  return `(${parts.join(', ')})\n`;
}

/** Rows of a query or a browsed table, aligned; headers as the database named them, NULL cells empty. */
export function queryResult(r: SandboxQueryResult): string {
  if (!r.columns.length) return `${r.command ?? 'OK'}${r.affected !== undefined ? ` ${r.affected}` : ''}\n`;
  const headers = resultHeaders(r);
  const rows = resultRows(r);
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  const lines = [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
  return `${lines.join('\n')}\n${resultFooter(r)}`;
}
