/**
 * Retention of fulls (restic's bucket rule in the policy's time zone): hand examples, then properties over random
 * histories against a reference written the slow, obvious way (local dates from a fresh Intl lookup per backup, ISO
 * weeks by the Thursday rule, each backup compared with every other).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CALENDAR_RULES, decideRetention, NO_RULES_NOTE, type CalendarRule, type RetainReason, type RetentionBackup, type RetentionRules } from '../src/lifecycle/retention.ts';

const DAY = 86_400_000;
const at = (iso: string) => new Date(iso);
const backup = (id: string, iso: string, extra: Partial<RetentionBackup> = {}): RetentionBackup => ({ id, time: at(iso), succeeded: true, pinned: false, pinExpires: null, ...extra });
const keptIds = (decisions: ReturnType<typeof decideRetention>) => decisions.filter((d) => d.keep).map((d) => d.id).sort();
const byId = (decisions: ReturnType<typeof decideRetention>, id: string) => decisions.find((d) => d.id === id)!;

describe('retention, by hand', () => {
  it('daily 7 keeps the newest backup of each of the last 7 days that have one, however many a day', () => {
    const days = ['01', '02', '03', '05', '06', '08', '09', '10', '12'];
    const backups = days.flatMap((d) => ['03:00', '11:00', '19:00'].map((h) => backup(`${d}-${h}`, `2026-03-${d}T${h}:00Z`)));
    const decisions = decideRetention(backups, { daily: 7 }, 'UTC', at('2026-03-12T20:00:00Z'));
    expect(keptIds(decisions)).toEqual(['03-19:00', '05-19:00', '06-19:00', '08-19:00', '09-19:00', '10-19:00', '12-19:00']);
    expect(byId(decisions, '12-19:00').retainedBy).toEqual(['newest', 'daily']);
    expect(byId(decisions, '12-11:00')).toMatchObject({ keep: false, retainedBy: [], expiresAt: null, reason: 'kept by no rule of retain {daily: 7}' });
  });

  it('a backup a day under daily 7 goes with the first backup of the seventh day after it', () => {
    const backups = Array.from({ length: 10 }, (_, i) => backup(`d${i + 1}`, `2026-04-${String(i + 1).padStart(2, '0')}T09:00:00Z`));
    const decisions = decideRetention(backups, { daily: 7 }, 'UTC', at('2026-04-10T12:00:00Z'));
    expect(byId(decisions, 'd4').expiresAt).toEqual(at('2026-04-11T00:00:00Z'));
    expect(byId(decisions, 'd10').expiresAt).toEqual(at('2026-04-17T00:00:00Z'));
    // Two days without a backup (11 and 12 April) push every expiry back: the next backup can only come from now on.
    const later = decideRetention(backups, { daily: 7 }, 'UTC', at('2026-04-12T18:00:00Z'));
    expect(byId(later, 'd4').expiresAt).toEqual(at('2026-04-12T18:00:00Z'));
    expect(byId(later, 'd10').expiresAt).toEqual(at('2026-04-18T00:00:00Z'));
  });

  it('weekly counts ISO weeks across the year boundary (week 1 of 2027 starts on Monday 4 January)', () => {
    const backups = [backup('thu-31', '2026-12-31T10:00:00Z'), backup('sat-02', '2027-01-02T10:00:00Z'), backup('sun-03', '2027-01-03T10:00:00Z'), backup('mon-04', '2027-01-04T10:00:00Z'), backup('tue-22', '2026-12-22T10:00:00Z')];
    const decisions = decideRetention(backups, { weekly: 2 }, 'UTC', at('2027-01-05T00:00:00Z'));
    expect(keptIds(decisions)).toEqual(['mon-04', 'sun-03']);
    expect(byId(decisions, 'sun-03').expiresAt).toEqual(at('2027-01-11T00:00:00Z'));
    expect(keptIds(decideRetention(backups, { weekly: 3 }, 'UTC', at('2027-01-05T00:00:00Z')))).toEqual(['mon-04', 'sun-03', 'tue-22']);
    // Monthly and yearly see December and January apart.
    expect(keptIds(decideRetention(backups, { monthly: 2 }, 'UTC', at('2027-01-05T00:00:00Z')))).toEqual(['mon-04', 'thu-31']);
    expect(keptIds(decideRetention(backups, { yearly: 5 }, 'UTC', at('2027-01-05T00:00:00Z')))).toEqual(['mon-04', 'thu-31']);
  });

  it("puts a backup in the day of the policy's time zone, not UTC's", () => {
    const backups = [backup('a', '2026-05-31T09:30:00Z'), backup('b', '2026-05-31T10:30:00Z'), backup('c', '2026-06-01T06:00:00Z')];
    const now = at('2026-06-01T07:00:00Z');
    expect(keptIds(decideRetention(backups, { daily: 5 }, 'UTC', now))).toEqual(['b', 'c']);
    // Los Angeles (UTC-7): all three on 31 May. Kiritimati (UTC+14): a on 31 May, b and c on 1 June.
    expect(keptIds(decideRetention(backups, { daily: 5 }, 'America/Los_Angeles', now))).toEqual(['c']);
    expect(keptIds(decideRetention(backups, { daily: 5 }, 'Pacific/Kiritimati', now))).toEqual(['a', 'c']);
    expect(byId(decideRetention(backups, { daily: 5 }, 'Pacific/Kiritimati', now), 'c').expiresAt).toEqual(at('2026-06-05T10:00:00Z'));
  });

  it('on daylight saving days: Berlin springs forward, Los Angeles falls back, Santiago skips midnight', () => {
    const berlin = [backup('sat-late', '2026-03-28T22:30:00Z'), backup('sun-early', '2026-03-28T23:30:00Z'), backup('sun-late', '2026-03-29T21:30:00Z'), backup('mon-early', '2026-03-29T22:30:00Z')];
    const spring = decideRetention(berlin, { daily: 3 }, 'Europe/Berlin', at('2026-03-29T23:00:00Z'));
    expect(keptIds(spring)).toEqual(['mon-early', 'sat-late', 'sun-late']);
    expect(byId(spring, 'sat-late').expiresAt).toEqual(at('2026-03-30T22:00:00Z'));
    expect(byId(spring, 'mon-early').expiresAt).toEqual(at('2026-04-01T22:00:00Z'));
    // 1 November 2026 lasts 25 hours in Los Angeles: 00:30 PDT and 23:30 PST are the same day.
    const fall = [backup('pdt', '2026-11-01T07:30:00Z'), backup('pst', '2026-11-02T07:30:00Z'), backup('before', '2026-10-31T06:30:00Z')];
    expect(keptIds(decideRetention(fall, { daily: 2 }, 'America/Los_Angeles', at('2026-11-02T08:00:00Z')))).toEqual(['before', 'pst']);
    // 6 September 2026 starts at 01:00 in Santiago (04:00 UTC): the day after 5 September begins there.
    const santiago = decideRetention([backup('sat', '2026-09-05T15:00:00Z')], { daily: 1 }, 'America/Santiago', at('2026-09-05T16:00:00Z'));
    expect(santiago[0]!.expiresAt).toEqual(at('2026-09-06T04:00:00Z'));
  });

  it('always keeps the newest succeeded backup and decides only on succeeded ones', () => {
    const backups = [backup('old', '2026-01-01T00:00:00Z'), backup('new', '2026-02-01T00:00:00Z'), backup('failed', '2026-03-01T00:00:00Z', { succeeded: false })];
    const decisions = decideRetention(backups, { daily: 0, weekly: 0, monthly: 0, yearly: 1 }, 'UTC', at('2026-03-02T00:00:00Z'));
    expect(decisions.map((d) => d.id)).toEqual(['old', 'new']);
    expect(byId(decisions, 'new')).toMatchObject({ keep: true, retainedBy: ['newest', 'yearly'], expiresAt: at('2027-01-01T00:00:00Z') });
    expect(byId(decisions, 'old').keep).toBe(false);
  });

  it('holds pinned backups until the pin expires, then lets the rules decide', () => {
    const now = at('2026-06-01T00:00:00Z');
    const backups = [
      backup('forever', '2026-01-01T00:00:00Z', { pinned: true }),
      backup('until-july', '2026-01-02T00:00:00Z', { pinned: true, pinExpires: at('2026-07-01T00:00:00Z') }),
      backup('was-pinned', '2026-01-03T00:00:00Z', { pinned: true, pinExpires: at('2026-05-01T00:00:00Z') }),
      backup('unpinned', '2026-01-04T00:00:00Z', { pinExpires: at('2026-05-01T00:00:00Z') }),
      backup('newest', '2026-05-31T00:00:00Z'),
    ];
    const decisions = decideRetention(backups, { daily: 1 }, 'UTC', now);
    expect(byId(decisions, 'forever')).toMatchObject({ keep: true, retainedBy: ['pinned'], expiresAt: null });
    expect(byId(decisions, 'until-july')).toMatchObject({ keep: true, retainedBy: ['pinned'], expiresAt: null });
    expect(byId(decisions, 'was-pinned')).toMatchObject({ keep: false, reason: 'kept by no rule of retain {daily: 1}; its pin expired at 2026-05-01T00:00:00.000Z' });
    expect(byId(decisions, 'unpinned').reason).toBe('kept by no rule of retain {daily: 1}');
    expect(byId(decideRetention(backups, { monthly: 2 }, 'UTC', now), 'unpinned').retainedBy).toEqual(['monthly']);
  });

  it('newest 3 keeps the three newest of a day that holds five, besides daily; newest 0 or absent leaves daily alone', () => {
    // A first backup, a migration, a second backup, and so on, all on 10 March: daily keeps one of them.
    const sameDay = ['09:00', '10:00', '11:00', '12:00', '13:00'].map((h) => backup(`10-${h}`, `2026-03-10T${h}:00Z`));
    const backups = [backup('09-03:00', '2026-03-09T03:00:00Z'), ...sameDay];
    const now = at('2026-03-10T14:00:00Z');
    const decisions = decideRetention(backups, { newest: 3, daily: 7 }, 'UTC', now);
    expect(keptIds(decisions)).toEqual(['09-03:00', '10-11:00', '10-12:00', '10-13:00']);
    expect(byId(decisions, '10-13:00')).toMatchObject({ retainedBy: ['newest', 'daily'], expiresAt: at('2026-03-17T00:00:00Z') });
    // Only `newest` keeps them: no calendar foretells when three newer backups succeed.
    expect(byId(decisions, '10-12:00')).toMatchObject({ keep: true, retainedBy: ['newest'], expiresAt: null });
    expect(byId(decisions, '10-11:00')).toMatchObject({ keep: true, retainedBy: ['newest'], expiresAt: null });
    expect(byId(decisions, '09-03:00').retainedBy).toEqual(['daily']);
    expect(byId(decisions, '10-10:00')).toMatchObject({ keep: false, retainedBy: [], reason: 'kept by no rule of retain {newest: 3, daily: 7}' });
    // 0, 1 and absent keep the newest alone, so daily decides the rest exactly as before `newest` existed.
    const periodOnly = decideRetention(backups, { daily: 7 }, 'UTC', now);
    expect(keptIds(periodOnly)).toEqual(['09-03:00', '10-13:00']);
    expect(byId(periodOnly, '10-12:00').reason).toBe('kept by no rule of retain {daily: 7}');
    expect(decideRetention(backups, { newest: 0, daily: 7 }, 'UTC', now)).toEqual(periodOnly);
    expect(decideRetention(backups, { newest: 1, daily: 7 }, 'UTC', now).map((d) => [d.id, d.keep, d.retainedBy])).toEqual(periodOnly.map((d) => [d.id, d.keep, d.retainedBy]));
    // A pin still holds what newest lets go.
    const pinned = decideRetention([...backups, backup('10-08:00', '2026-03-10T08:00:00Z', { pinned: true })], { newest: 3, daily: 7 }, 'UTC', now);
    expect(byId(pinned, '10-08:00')).toMatchObject({ keep: true, retainedBy: ['pinned'] });
  });

  it('newest counts backups, not days: older ones stay whatever their age, and newest alone is a rule', () => {
    const backups = [backup('jan', '2025-01-01T00:00:00Z'), backup('jun', '2025-06-01T00:00:00Z'), backup('dec', '2025-12-01T00:00:00Z'), backup('mar', '2026-03-01T00:00:00Z')];
    const now = at('2026-03-02T00:00:00Z');
    const decisions = decideRetention(backups, { newest: 3 }, 'UTC', now);
    expect(keptIds(decisions)).toEqual(['dec', 'jun', 'mar']);
    expect(byId(decisions, 'jun')).toMatchObject({ keep: true, retainedBy: ['newest'], expiresAt: null });
    expect(byId(decisions, 'jan')).toMatchObject({ keep: false, reason: 'kept by no rule of retain {newest: 3}' });
    expect(keptIds(decideRetention(backups, { newest: 1 }, 'UTC', now))).toEqual(['mar']);
    // More than there are: all kept; a fraction rounds down like the calendar rules.
    expect(keptIds(decideRetention(backups, { newest: 10 }, 'UTC', now))).toEqual(['dec', 'jan', 'jun', 'mar']);
    expect(keptIds(decideRetention(backups, { newest: 2.9 }, 'UTC', now))).toEqual(['dec', 'mar']);
    // Failed runs are not counted among the newest.
    const failed = backup('failed', '2026-03-01T12:00:00Z', { succeeded: false });
    expect(keptIds(decideRetention([...backups, failed], { newest: 2 }, 'UTC', now))).toEqual(['dec', 'mar']);
    // newest 0 alone is no rule: nothing expires.
    expect(decideRetention(backups, { newest: 0 }, 'UTC', now).every((d) => d.keep && d.note === NO_RULES_NOTE)).toBe(true);
  });

  it('keeps everything when the policy has no rule, saying why', () => {
    const backups = [backup('a', '2026-01-01T00:00:00Z'), backup('b', '2026-01-02T00:00:00Z', { pinned: true }), backup('c', '2026-01-03T00:00:00Z')];
    const decisions = decideRetention(backups, {}, undefined, at('2026-02-01T00:00:00Z'));
    expect(decisions).toEqual([
      { id: 'a', keep: true, retainedBy: [], expiresAt: null, note: NO_RULES_NOTE },
      { id: 'b', keep: true, retainedBy: ['pinned'], expiresAt: null, note: NO_RULES_NOTE },
      { id: 'c', keep: true, retainedBy: ['newest'], expiresAt: null, note: NO_RULES_NOTE },
    ]);
    expect(keptIds(decideRetention(backups, { daily: 0, weekly: -1, monthly: Number.NaN }, 'UTC', at('2026-02-01T00:00:00Z')))).toEqual(['a', 'b', 'c']);
  });
});

// ---- The reference: slow and obvious. ----

const formatters = new Map<string, Intl.DateTimeFormat>();
function civil(ms: number, timeZone: string): { y: number; m: number; d: number } {
  const format = formatters.get(timeZone) ?? new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: 'numeric', day: 'numeric' });
  formatters.set(timeZone, format);
  const part = (type: string) => Number(format.formatToParts(ms).find((p) => p.type === type)!.value);
  return { y: part('year'), m: part('month'), d: part('day') };
}

const pad = (n: number) => String(n).padStart(2, '0');
/** The bucket a civil date falls in, by the textbook definitions. */
function bucketKey(rule: CalendarRule, { y, m, d }: { y: number; m: number; d: number }): string {
  if (rule === 'daily') return `${y}-${pad(m)}-${pad(d)}`;
  if (rule === 'monthly') return `${y}-${pad(m)}`;
  if (rule === 'yearly') return `${y}`;
  // ISO 8601: a week belongs to the year of its Thursday, and week 1 holds the year's first Thursday.
  const date = Date.UTC(y, m - 1, d);
  const mondayBased = (new Date(date).getUTCDay() + 6) % 7;
  const thursday = new Date(date + (3 - mondayBased) * DAY);
  const week = 1 + Math.floor((thursday.getTime() - Date.UTC(thursday.getUTCFullYear(), 0, 1)) / (7 * DAY));
  return `${thursday.getUTCFullYear()}-W${pad(week)}`;
}

const isNewer = (a: RetentionBackup, b: RetentionBackup) => a.time.getTime() > b.time.getTime() || (a.time.getTime() === b.time.getTime() && a.id > b.id);

/** Each succeeded backup's reasons, by comparing every backup with every other. */
function reference(backups: RetentionBackup[], rules: RetentionRules, timeZone: string, now: Date): Map<string, RetainReason[]> {
  const ok = backups.filter((b) => b.succeeded);
  const keys = new Map(ok.map((b) => [b, civil(b.time.getTime(), timeZone)]));
  const reasons = new Map<string, RetainReason[]>(ok.map((b) => [b.id, []]));
  const newest = Math.max(1, rules.newest ?? 0);
  for (const b of ok) if (ok.filter((other) => isNewer(other, b)).length < newest) reasons.get(b.id)!.push('newest');
  for (const rule of CALENDAR_RULES) {
    const n = rules[rule] ?? 0;
    const key = (b: RetentionBackup) => bucketKey(rule, keys.get(b)!);
    const newestOfBucket = ok.filter((b) => !ok.some((other) => key(other) === key(b) && isNewer(other, b)));
    for (const b of newestOfBucket) if (newestOfBucket.filter((other) => isNewer(other, b)).length < n) reasons.get(b.id)!.push(rule);
  }
  for (const b of ok) if (b.pinned && (b.pinExpires === null || b.pinExpires > now)) reasons.get(b.id)!.push('pinned');
  return reasons;
}

// ---- Random histories: two years of fulls, several a day, some failed, some pinned. ----

const START = Date.UTC(2025, 5, 1);
const ZONES = ['UTC', 'America/Los_Angeles', 'Pacific/Kiritimati', 'Europe/Berlin', 'America/Santiago', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Pacific/Chatham', 'America/St_Johns'];
const pin = fc.oneof(fc.constant({ pinned: false, pinExpires: null }), fc.constant({ pinned: true, pinExpires: null }), fc.integer({ min: 0, max: 800 }).map((day) => ({ pinned: true, pinExpires: new Date(START + day * DAY) })));
const entry = fc.record({ day: fc.oneof(fc.integer({ min: 0, max: 730 }), fc.integer({ min: 700, max: 730 })), ms: fc.oneof(fc.integer({ min: 0, max: DAY - 1 }), fc.constantFrom(0, 3_600_000, DAY - 1)), succeeded: fc.integer({ min: 0, max: 9 }).map((x) => x < 8), pin });
const history = fc.array(entry, { minLength: 1, maxLength: 80 }).map((entries) => entries.map((e, i): RetentionBackup => ({ id: `b${String(i).padStart(3, '0')}`, time: new Date(START + e.day * DAY + e.ms), succeeded: e.succeeded, ...e.pin })));
const count = fc.integer({ min: 0, max: 5 });
const rules = fc.record({ newest: count, daily: count, weekly: count, monthly: count, yearly: count }, { requiredKeys: ['daily', 'weekly', 'monthly', 'yearly'] });
const scene = fc.record({ backups: history, rules, zone: fc.constantFrom(...ZONES), nowDay: fc.integer({ min: 731, max: 760 }) }).map((s) => ({ ...s, now: new Date(START + s.nowDay * DAY) }));
const ruled = (r: RetentionRules) => [...CALENDAR_RULES, 'newest' as const].some((rule) => (r[rule] ?? 0) > 0);

describe('retention, as properties of random histories', () => {
  it('keeps exactly what the reference keeps, for the same reasons', () => {
    fc.assert(
      fc.property(scene, ({ backups, rules: r, zone, now }) => {
        const expected = reference(backups, r, zone, now);
        const decisions = decideRetention(backups, r, zone, now);
        expect(new Map(decisions.map((d) => [d.id, d.retainedBy]))).toEqual(expected);
        for (const d of decisions) expect(d.keep).toBe(d.retainedBy.length > 0 || !ruled(r));
      }),
      { numRuns: 300 },
    );
  });

  it('matches the reference for every combination of rules from 0 to 5', () => {
    const [sample] = fc.sample(scene, { numRuns: 1, seed: 25 });
    const { backups, zone, now } = sample!;
    const all = [0, 1, 2, 3, 4, 5];
    for (const newest of [undefined, 0, 3]) for (const daily of all) for (const weekly of all) for (const monthly of all) for (const yearly of all) {
      const r = { newest, daily, weekly, monthly, yearly };
      const decisions = decideRetention(backups, r, zone, now);
      expect(new Map(decisions.map((d) => [d.id, d.retainedBy]))).toEqual(reference(backups, r, zone, now));
    }
  });

  it('keeps the newest and every unexpired pin; a kept backup says why, an expired one why not; expiresAt follows the rules', () => {
    fc.assert(
      fc.property(scene, ({ backups, rules: r, zone, now }) => {
        const decisions = decideRetention(backups, r, zone, now);
        const ok = backups.filter((b) => b.succeeded);
        expect(decisions.map((d) => d.id)).toEqual(ok.map((b) => b.id));
        const newest = ok.reduce<RetentionBackup | undefined>((best, b) => (!best || isNewer(b, best) ? b : best), undefined);
        if (newest) expect(byId(decisions, newest.id)).toMatchObject({ keep: true, retainedBy: expect.arrayContaining(['newest']) });
        for (const b of ok) {
          const d = byId(decisions, b.id);
          if (b.pinned && (b.pinExpires === null || b.pinExpires > now)) expect(d.retainedBy).toContain('pinned');
          if (d.keep && ruled(r)) expect(d.retainedBy.length).toBeGreaterThan(0);
          if (!d.keep) expect(d).toMatchObject({ retainedBy: [], expiresAt: null, reason: expect.stringMatching(/^kept by no rule of retain/) });
          const byRule = d.retainedBy.some((reason) => (CALENDAR_RULES as readonly string[]).includes(reason));
          expect(d.expiresAt !== null).toBe(byRule);
          if (d.expiresAt) expect(d.expiresAt.getTime()).toBeGreaterThanOrEqual(Math.max(b.time.getTime(), now.getTime()));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('expiresAt of several rules is the latest of each rule alone', () => {
    fc.assert(
      fc.property(scene, ({ backups, rules: r, zone, now }) => {
        const alone = CALENDAR_RULES.map((rule) => new Map(decideRetention(backups, { [rule]: r[rule] }, zone, now).map((d) => [d.id, d])));
        for (const d of decideRetention(backups, r, zone, now)) {
          const expiries = alone.map((m) => m.get(d.id)!).filter((x) => x.retainedBy.some((reason) => reason !== 'newest' && reason !== 'pinned'));
          expect(d.expiresAt?.getTime() ?? null).toEqual(expiries.length ? Math.max(...expiries.map((x) => x.expiresAt!.getTime())) : null);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('a backup a rule keeps stays until expiresAt and goes then, when a backup lands at the start of every later bucket', () => {
    const oneRule = fc.record({ rule: fc.constantFrom(...CALENDAR_RULES), n: fc.integer({ min: 1, max: 5 }) });
    fc.assert(
      fc.property(scene, oneRule, ({ backups, zone, now }, { rule, n }) => {
        const policy = { [rule]: n };
        const ok = backups.filter((b) => b.succeeded);
        if (!ok.length) return;
        for (const d of decideRetention(backups, policy, zone, now).filter((x) => x.retainedBy.includes(rule))) {
          const expiry = d.expiresAt!.getTime();
          const future = futureBackups(ok, rule, zone, now, expiry);
          const before = decideRetention([...backups, ...future.filter((b) => b.time.getTime() < expiry)], policy, zone, new Date(expiry - 1));
          const after = decideRetention([...backups, ...future], policy, zone, new Date(expiry));
          expect(byId(before, d.id).retainedBy).toContain(rule);
          expect(byId(after, d.id).retainedBy).not.toContain(rule);
        }
      }),
      { numRuns: 60 },
    );
  });
});

/** One backup at the start of every bucket after the newest backup's (or from now on), up to `until`. */
function futureBackups(ok: RetentionBackup[], rule: CalendarRule, zone: string, now: Date, until: number): RetentionBackup[] {
  const newest = ok.reduce((best, b) => (isNewer(b, best) ? b : best));
  const newestDay = civil(newest.time.getTime(), zone);
  const today = civil(now.getTime(), zone);
  const dayAfterNewest = Date.UTC(newestDay.y, newestDay.m - 1, newestDay.d) + DAY;
  let day = Math.max(dayAfterNewest, Date.UTC(today.y, today.m - 1, today.d));
  let last = bucketKey(rule, newestDay);
  const future: RetentionBackup[] = [];
  for (let time = 0; time <= until; day += DAY) {
    const date = new Date(day);
    const key = bucketKey(rule, { y: date.getUTCFullYear(), m: date.getUTCMonth() + 1, d: date.getUTCDate() });
    if (key === last) continue;
    last = key;
    time = Math.max(firstInstantOf(day, zone), now.getTime());
    if (time <= until) future.push({ id: `z${future.length}`, time: new Date(time), succeeded: true, pinned: false, pinExpires: null });
  }
  return future;
}

/** The first instant whose local date is the civil day `day` (ms of its UTC midnight), by bisection. */
function firstInstantOf(day: number, zone: string): number {
  const dayOf = (ms: number) => {
    const c = civil(ms, zone);
    return Date.UTC(c.y, c.m - 1, c.d);
  };
  let [low, high] = [day - 15 * 3_600_000, day + 13 * 3_600_000];
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (dayOf(mid) >= day) high = mid;
    else low = mid;
  }
  return high;
}
