/**
 * The moment of a restore as people type it: a wall-clock time in their own time zone, to the second (a fraction
 * allowed), or an RFC 3339 time with its offset. Pure: the browser's time zone is the only outside input (Date's).
 */

export type ParsedMoment =
  | { ok: true; at: number; /** The same wall-clock time happens twice (the clocks went back): the later instant. */ laterTwin?: number }
  | { ok: false; problem: string };

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?$/;
const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
const DAY = 86_400_000;

export const MOMENT_FORMAT = 'YYYY-MM-DD HH:MM:SS';

/** Reads what was typed: local `YYYY-MM-DD HH:MM:SS[.mmm]`, or RFC 3339 with `Z` or an offset (taken as is). */
export function parseMoment(text: string): ParsedMoment {
  const value = text.trim();
  if (!value) return { ok: false, problem: `Type a moment as ${MOMENT_FORMAT}, or choose Latest.` };
  if (WITH_OFFSET.test(value)) {
    const at = Date.parse(value.replace(' ', 'T'));
    return Number.isNaN(at) ? { ok: false, problem: `${value} is not a valid time.` } : { ok: true, at };
  }
  const parts = LOCAL.exec(value);
  if (!parts) return { ok: false, problem: `Write it as ${MOMENT_FORMAT} (for example 2026-11-28 14:03:07), in your time zone.` };
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const millis = Number((parts[7] ?? '').padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return { ok: false, problem: `${parts[1]}-${parts[2]}-${parts[3]} is not a date.` };
  if (hour > 23 || minute > 59 || second > 59) return { ok: false, problem: `${parts[4]}:${parts[5]}:${parts[6]} is not a time of day.` };
  const wall = { year, month, day, hour, minute, second, millis };
  const at = localInstant(wall);
  if (!sameWallClock(at, wall)) {
    return { ok: false, problem: `${value.slice(11)} does not exist on ${value.slice(0, 10)} in your time zone: the clocks moved forward then.` };
  }
  const laterTwin = twinOf(at, wall);
  return laterTwin === undefined ? { ok: true, at } : { ok: true, at, laterTwin };
}

/** The moment as the text field shows it: local `YYYY-MM-DD HH:MM:SS`, with milliseconds only when it has some. */
export function formatMomentInput(at: number): string {
  const d = new Date(at);
  const text = `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  return d.getMilliseconds() ? `${text}.${String(d.getMilliseconds()).padStart(3, '0')}` : text;
}

/** The same moment in UTC, to the second (milliseconds when it has some): `2026-11-28 13:03:07 UTC`. */
export function formatUtc(at: number): string {
  const iso = new Date(at).toISOString();
  const millis = iso.slice(19, 23);
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${millis === '.000' ? '' : millis} UTC`;
}

/** The wall-clock time of day alone (for "Use 14:03:07 instead"), with milliseconds only when it has some. */
export function formatTimeOfDay(at: number): string {
  return formatMomentInput(at).slice(11);
}

/** The browser's time zone as people recognise it: "Europe/Berlin (CET)", or the offset when it has no name. */
export function zoneLabel(at: number): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const short = new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' }).formatToParts(new Date(at)).find((p) => p.type === 'timeZoneName')?.value;
  return short && short !== zone ? `${zone} (${short})` : (zone ?? short ?? 'your time zone');
}

/** The moment as the API takes it (RFC 3339 in UTC, milliseconds kept: a commit may fall inside a second). */
export function toRfc3339(at: number): string {
  const iso = new Date(at).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, 19)}Z` : iso;
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millis: number;
}

function localInstant(w: WallClock): number {
  const date = new Date(2000, 0, 1, 0, 0, 0, 0);
  // setFullYear: the Date constructor reads years 0..99 as 1900..1999.
  date.setFullYear(w.year, w.month - 1, w.day);
  date.setHours(w.hour, w.minute, w.second, w.millis);
  return date.getTime();
}

function sameWallClock(at: number, w: WallClock): boolean {
  const d = new Date(at);
  return d.getFullYear() === w.year && d.getMonth() + 1 === w.month && d.getDate() === w.day && d.getHours() === w.hour && d.getMinutes() === w.minute && d.getSeconds() === w.second;
}

/**
 * When the clocks go back, a wall-clock time happens twice and Date picks the earlier instant: the later one is that
 * instant plus the hour (or whatever the change was) the clocks went back within the next day, when it shows the same.
 */
function twinOf(at: number, w: WallClock): number | undefined {
  const shift = (new Date(at + DAY).getTimezoneOffset() - new Date(at).getTimezoneOffset()) * 60_000;
  if (shift <= 0) return undefined;
  return sameWallClock(at + shift, w) ? at + shift : undefined;
}

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

const two = (n: number) => String(n).padStart(2, '0');

/** The moment the wizard restores to: the newest one, one picked or typed, or typed text that is not a moment yet. */
export type Moment = { kind: 'latest' } | { kind: 'at'; at: number } | { kind: 'invalid'; problem: string };

/** The moment as the API's `at` takes it; undefined while the typed text is not a moment. */
export function atParam(moment: Moment): string | undefined {
  if (moment.kind === 'latest') return 'latest';
  return moment.kind === 'at' ? toRfc3339(moment.at) : undefined;
}
