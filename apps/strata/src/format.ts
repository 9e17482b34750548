// Plain-text rendering helpers: aligned tables, key/value blocks, sizes, durations and times.
import { DURATION_PATTERN, parseDuration as parseDurationMs } from '@sigil/proto/units';

export type Cell = string | number | boolean | null | undefined;

/** Renders rows as an aligned table with an upper-case header; two spaces between columns. */
export function table(headers: string[], rows: Cell[][]): string {
  const text = rows.map((row) => headers.map((_, i) => cell(row[i])));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...text.map(line)].join('\n') + '\n';
}

/** Renders `key: value` lines with the values aligned; pairs whose value is empty are left out. */
export function keyValues(pairs: Array<[string, Cell]>): string {
  const shown = pairs.filter(([, v]) => v !== undefined && v !== null && v !== '');
  const width = Math.max(0, ...shown.map(([k]) => k.length + 1));
  return shown.map(([k, v]) => `${(k + ':').padEnd(width)}  ${cell(v)}`).join('\n') + (shown.length ? '\n' : '');
}

export function cell(v: Cell): string {
  if (v === undefined || v === null || v === '') return '-';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return String(v).replace(/\s*\n\s*/g, ' ');
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

/** 1536 -> "1.5 KiB"; undefined -> "-". */
export function humanBytes(n: number | undefined | null): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return '-';
  let v = Math.abs(n);
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  const digits = u === 0 || v >= 100 ? 0 : v >= 10 ? 1 : 2;
  const s = `${v.toFixed(digits).replace(/\.0+$|(\.\d*[1-9])0+$/, '$1')} ${UNITS[u]}`;
  return n < 0 ? `-${s}` : s;
}

/** 3725 -> "1h2m5s"; 4.25 -> "4.3s". */
export function humanDuration(seconds: number | undefined | null): string {
  if (seconds === undefined || seconds === null || !Number.isFinite(seconds)) return '-';
  if (seconds < 60) return `${seconds < 10 ? Number(seconds.toFixed(1)) : Math.round(seconds)}s`;
  let s = Math.round(seconds);
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d) return `${d}d${h}h${m ? `${m}m` : ''}`;
  if (h) return `${h}h${m}m`;
  return `${m}m${s ? `${s}s` : ''}`;
}

/** RFC 3339 -> "2025-01-02 03:04:05Z" (UTC, second precision); anything unparsable as is. */
export function time(v: string | undefined | null): string {
  if (!v) return '-';
  const t = Date.parse(v);
  if (Number.isNaN(t)) return v;
  return new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function list(v: string[] | undefined | null, max = 0): string {
  if (!v || v.length === 0) return '-';
  if (max > 0 && v.length > max) return `${v.slice(0, max).join(',')},+${v.length - max}`;
  return v.join(',');
}

export function flags(pairs: Array<[boolean | undefined | null | number | string, string]>): string {
  return pairs.filter(([on]) => Boolean(on)).map(([, name]) => name).join(',') || '-';
}

/** Whether `s` is a Duration of the API: number with optional fraction and a unit, units may repeat. */
export function isDuration(s: string): boolean {
  return DURATION_PATTERN.test(s);
}

/** A Duration ("30m", "1h30m", "2d", "1.5h") in milliseconds; undefined when invalid. */
export function parseDuration(s: string): number | undefined {
  return isDuration(s) ? parseDurationMs(s) : undefined;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** Whether `s` is an RFC 3339 date-time such as 2025-03-01T02:00:00Z. */
/** A calendar date, `2027-01-01`. */
export function isDate(s: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`));
}

export function isTimestamp(s: string): boolean {
  return RFC3339.test(s) && !Number.isNaN(Date.parse(s));
}
