/**
 * Which full backups a policy's `retain: { newest, daily, weekly, monthly, yearly }` keeps: restic's rules
 * (`forget --keep-last`, `--keep-daily` and the rest), the calendar ones computed in the policy's IANA time zone.
 * Pure: the caller loads the backups and applies the decisions.
 *
 * - Only succeeded backups take part, and only they get a decision (the result holds one per succeeded backup, in
 *   the order given). Running or failed backups are not retention's business.
 * - Backups are walked newest first (time, then id, descending). Rule `daily: N` keeps a backup when it is the
 *   newest of its calendar day and that day is one of the N newest days that hold a backup; `weekly` does the same
 *   with ISO weeks (ISO week-year and number), `monthly` with months, `yearly` with years. Rules are independent and
 *   a backup may be kept by several. A rule of 0, a negative, non-finite or absent one keeps nothing; a fraction is
 *   rounded down.
 * - Rule `newest: N` keeps the N newest backups whatever their age (restic's `--keep-last`), so several taken on
 *   one day (a backup, a migration, another backup) all stay although `daily` keeps one a day. The newest succeeded
 *   backup is always kept (`newest`), so `newest` of 0, 1 or absent keeps that one alone.
 * - A pinned backup is kept (`pinned`) while its pin has no expiry or expires after `now`; an expired pin keeps
 *   nothing and the backup falls under the rules again. Pinned backups take part in the buckets like any other.
 * - No rule at all (every rule, `newest` too, 0 or absent): nothing expires. Deleting a store's history because
 *   `retain` is empty would be the one mistake retention cannot undo, so every backup is kept, with `retainedBy`
 *   naming only what really holds it (`newest`, `pinned`, often nothing) and `note` (on every decision) saying why
 *   it is kept. `newest` of 1 or more is a rule: `{ newest: 3 }` alone keeps the three newest, the others expire.
 * - `expiresAt` is the latest moment the calendar rules keep a backup, assuming a backup lands in every bucket from
 *   now on (see `ruleExpiry`). Null when no calendar rule keeps it (only `newest` or a pin: `newest` holds until N
 *   newer backups succeed, which no calendar foretells; a pin's end is its `pinExpires`), and for expired backups.
 *
 * - An unknown time zone throws the RangeError of `Intl.DateTimeFormat`.
 *
 * Speed: local dates come from one cached `Intl.DateTimeFormat` per time zone and one offset lookup per UTC day
 * (exact per instant only on days where the offset changes), cached for the process: a pass over 10,000 backups
 * takes about 15 ms once warm (test/bench/retention.ts).
 */

export type RetainReason = 'newest' | 'daily' | 'weekly' | 'monthly' | 'yearly' | 'pinned';
export type CalendarRule = 'daily' | 'weekly' | 'monthly' | 'yearly';
/** A policy's `retain`: the count of each calendar rule, and `newest` (absent: the newest backup alone). */
export type RetentionRules = Partial<Record<CalendarRule | 'newest', number>>;

export interface RetentionBackup {
  id: string;
  /** When the backup is consistent (or its completion when that is unknown): what puts it in a bucket. */
  time: Date;
  succeeded: boolean;
  pinned: boolean;
  pinExpires: Date | null;
}

export interface RetentionDecision {
  id: string;
  keep: boolean;
  /** Why it is kept, in the order newest, daily, weekly, monthly, yearly, pinned; empty when it expires. */
  retainedBy: RetainReason[];
  /** The latest moment the calendar rules keep it (see the header); null when they do not keep it. */
  expiresAt: Date | null;
  /** Set when it expires: why, e.g. "kept by no rule of retain {newest: 5, daily: 7, weekly: 4}". */
  reason?: string;
  /** Set when the policy has no rule at all: why the backup is kept although no rule names it. */
  note?: string;
}

export const CALENDAR_RULES: readonly CalendarRule[] = ['daily', 'weekly', 'monthly', 'yearly'];
export const NO_RULES_NOTE = 'the policy retains by no rule (no newest, daily, weekly, monthly or yearly): nothing expires';

const DAY_MS = 86_400_000;
/** 1970-01-05, the first Monday after the epoch, as a day number: ISO weeks are counted from it. */
const FIRST_MONDAY = 4;

export function decideRetention(backups: RetentionBackup[], rules: RetentionRules, timeZone: string | undefined, now: Date): RetentionDecision[] {
  const succeeded = backups.filter((b) => b.succeeded);
  const counts = ruleCounts(rules);
  const newestCount = countOf(rules.newest);
  const order = newestFirst(succeeded);
  const kept = new Map<RetentionBackup, Held>();
  const holder = (b: RetentionBackup): Held => {
    const held = kept.get(b) ?? { reasons: new Set(), expiry: null };
    kept.set(b, held);
    return held;
  };
  // The newest backup is kept even under `newest: 0`: a policy never leaves a target without its latest full.
  for (const backup of order.slice(0, Math.max(1, newestCount))) holder(backup).reasons.add('newest');
  const calendar = calendarOf(timeZone ?? 'UTC');
  const days = order.map((b) => calendar.dayNumber(b.time.getTime()));
  for (const rule of CALENDAR_RULES) {
    for (const { backup, expiry } of keptByRule(order, days, rule, counts[rule], calendar, now)) {
      const held = holder(backup);
      held.reasons.add(rule);
      held.expiry = Math.max(held.expiry ?? expiry, expiry);
    }
  }
  for (const b of succeeded) if (pinHolds(b, now)) holder(b).reasons.add('pinned');
  const unruled = newestCount === 0 && CALENDAR_RULES.every((rule) => counts[rule] === 0);
  const named = [...(newestCount > 0 ? [`newest: ${newestCount}`] : []), ...CALENDAR_RULES.filter((rule) => counts[rule] > 0).map((rule) => `${rule}: ${counts[rule]}`)];
  const notKept = `kept by no rule of retain {${named.join(', ')}}`;
  return succeeded.map((b) => decision(b, kept.get(b), unruled, notKept, now));
}

/** What keeps a backup so far: the reasons, and the latest expiry of its calendar rules. */
interface Held {
  reasons: Set<RetainReason>;
  expiry: number | null;
}

function decision(b: RetentionBackup, held: Held | undefined, unruled: boolean, notKept: string, now: Date): RetentionDecision {
  const retainedBy = REASON_ORDER.filter((reason) => held?.reasons.has(reason));
  const expiresAt = held?.expiry != null ? new Date(held.expiry) : null;
  if (unruled) return { id: b.id, keep: true, retainedBy, expiresAt: null, note: NO_RULES_NOTE };
  if (retainedBy.length) return { id: b.id, keep: true, retainedBy, expiresAt };
  const pinEnded = b.pinned && b.pinExpires && b.pinExpires.getTime() <= now.getTime() ? `; its pin expired at ${b.pinExpires.toISOString()}` : '';
  return { id: b.id, keep: false, retainedBy, expiresAt: null, reason: notKept + pinEnded };
}

const REASON_ORDER: readonly RetainReason[] = ['newest', ...CALENDAR_RULES, 'pinned'];

/** A rule's count: 0 for absent, negative or non-finite; a fraction rounded down. */
const countOf = (n: number | undefined) => (n !== undefined && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

export function ruleCounts(rules: RetentionRules): Record<CalendarRule, number> {
  return { daily: countOf(rules.daily), weekly: countOf(rules.weekly), monthly: countOf(rules.monthly), yearly: countOf(rules.yearly) };
}

export const pinHolds = (b: RetentionBackup, now: Date) => b.pinned && (b.pinExpires === null || b.pinExpires.getTime() > now.getTime());

/** Newest first; among backups of the same millisecond the greater id counts as the newer, so the order is total. */
function newestFirst(backups: RetentionBackup[]): RetentionBackup[] {
  const timed = backups.map((backup) => ({ backup, time: backup.time.getTime() }));
  timed.sort((a, b) => b.time - a.time || (a.backup.id < b.backup.id ? 1 : a.backup.id > b.backup.id ? -1 : 0));
  return timed.map((t) => t.backup);
}

/**
 * The backups a rule of `count` buckets keeps, each with its expiry: the newest backup of each of the `count`
 * newest buckets that hold one (`order` is newest first, `days` are its local day numbers).
 */
function keptByRule(order: RetentionBackup[], days: number[], rule: CalendarRule, count: number, calendar: Calendar, now: Date): Array<{ backup: RetentionBackup; expiry: number }> {
  if (count === 0 || order.length === 0) return [];
  const bucketOf = (day: number) => calendar.bucket(rule, day);
  const seen = new Set<number>();
  const taken: Array<{ backup: RetentionBackup; bucket: number }> = [];
  for (let i = 0; i < order.length && taken.length < count; i++) {
    const bucket = bucketOf(days[i] as number);
    if (seen.has(bucket)) continue;
    seen.add(bucket);
    taken.push({ backup: order[i] as RetentionBackup, bucket });
  }
  const next = Math.max(Math.max(...seen) + 1, bucketOf(calendar.dayNumber(now.getTime())));
  return taken.map(({ backup }, rank) => ({ backup, expiry: ruleExpiry(rule, count, rank, next, calendar, now) }));
}

/**
 * Until when a rule keeps the backup of its `rank`-th newest bucket (0: the newest). It goes once `count` newer
 * buckets hold a backup: `count - rank` more are needed. Assuming a backup lands in every bucket from `next` on
 * (the bucket after the newest backup's, or the bucket of now when later), the last one needed is bucket
 * `next + count - rank - 1`, whose backup may come at its very start: the backup is kept until then and no later.
 * A bucket that has already begun (now's bucket) may get its backup at any moment: then it is kept until now.
 * Example: `daily: 7`, a backup every day up to today, one taken on day D: it goes with the first backup of D+7.
 * It may go sooner only if a newer backup lands in its own bucket and takes its place (several a week under `weekly`).
 */
function ruleExpiry(rule: CalendarRule, count: number, rank: number, next: number, calendar: Calendar, now: Date): number {
  return Math.max(calendar.bucketStart(rule, next + count - rank - 1), now.getTime());
}

/** A time zone's calendar on day numbers (days since 1970-01-01 in that zone). */
interface Calendar {
  dayNumber(ms: number): number;
  /** The bucket index of a day for a rule: consecutive buckets have consecutive indexes. */
  bucket(rule: CalendarRule, day: number): number;
  /** The first instant of a bucket in the zone. */
  bucketStart(rule: CalendarRule, bucket: number): number;
}

const calendars = new Map<string, Calendar>();

function calendarOf(timeZone: string): Calendar {
  let calendar = calendars.get(timeZone);
  if (!calendar) {
    calendar = zoneCalendar(timeZone);
    calendars.set(timeZone, calendar);
  }
  return calendar;
}

function zoneCalendar(timeZone: string): Calendar {
  const offsets = zoneOffsets(timeZone);
  const bucketStarts = new Map<string, number>();
  const dayNumber = offsets.dayNumber;
  return {
    dayNumber,
    bucket: (rule, day) => {
      if (rule === 'daily') return day;
      if (rule === 'weekly') return Math.floor((day - FIRST_MONDAY) / 7);
      const month = monthOfDay(day);
      return rule === 'monthly' ? month : Math.floor(month / 12);
    },
    bucketStart: (rule, bucket) => {
      const key = `${rule}:${bucket}`;
      let start = bucketStarts.get(key);
      if (start === undefined) {
        start = offsets.startOfDay(firstDayOfBucket(rule, bucket));
        bucketStarts.set(key, start);
      }
      return start;
    },
  };
}

/** year × 12 + month (0-11) of a day number, by Howard Hinnant's civil_from_days (no Date per backup). */
function monthOfDay(day: number): number {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const marchMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const month = marchMonth < 10 ? marchMonth + 2 : marchMonth - 10;
  return (yearOfEra + era * 400 + (month <= 1 ? 1 : 0)) * 12 + month;
}

function firstDayOfBucket(rule: CalendarRule, bucket: number): number {
  if (rule === 'daily') return bucket;
  if (rule === 'weekly') return bucket * 7 + FIRST_MONDAY;
  const [year, month] = rule === 'monthly' ? [Math.floor(bucket / 12), ((bucket % 12) + 12) % 12] : [bucket, 0];
  return Date.UTC(year, month, 1) / DAY_MS;
}

/**
 * Local day numbers and day starts in a zone. The offset is looked up at UTC midnights (one formatter call each,
 * cached); a UTC day whose two ends have the same offset is taken to have it throughout (no zone changes its offset
 * twice in a day), and only a day where it changes is looked up per instant.
 */
function zoneOffsets(timeZone: string) {
  const format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
  const offsetAt = (ms: number): number => {
    const second = Math.floor(ms / 1000) * 1000;
    const part: Record<string, number> = {};
    for (const { type, value } of format.formatToParts(second)) part[type] = Number(value);
    return Date.UTC(part.year as number, (part.month as number) - 1, part.day, part.hour, part.minute, part.second) - second;
  };
  const atMidnight = new Map<number, number>();
  const midnightOffset = (utcDay: number): number => {
    let offset = atMidnight.get(utcDay);
    if (offset === undefined) {
      offset = offsetAt(utcDay * DAY_MS);
      atMidnight.set(utcDay, offset);
    }
    return offset;
  };
  const dayNumber = (ms: number): number => {
    const utcDay = Math.floor(ms / DAY_MS);
    const offset = midnightOffset(utcDay);
    return Math.floor((ms + (offset === midnightOffset(utcDay + 1) ? offset : offsetAt(ms))) / DAY_MS);
  };
  return { dayNumber, startOfDay: (day: number) => startOfDay(day, dayNumber, offsetAt) };
}

/** The first instant of local day `day`: its midnight, or the end of a transition that skips midnight. */
function startOfDay(day: number, dayNumber: (ms: number) => number, offsetAt: (ms: number) => number): number {
  const wall = day * DAY_MS;
  const guess = wall - offsetAt(wall - offsetAt(wall));
  if (dayNumber(guess) === day && dayNumber(guess - 1) < day) return guess;
  // Midnight skipped or repeated: search the first instant of the day between the widest offsets (-12 h, +14 h).
  let [low, high] = [wall - 15 * 3_600_000, wall + 13 * 3_600_000];
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (dayNumber(mid) >= day) high = mid;
    else low = mid;
  }
  return high;
}
