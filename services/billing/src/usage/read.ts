/** Reading counted usage: a period's totals by meter and its daily series of completed envelopes. */
import type { Period } from '../plans/index.ts';
import type { Db } from '../db.ts';
import { METERS, type Meter } from './count.ts';

export interface PeriodUsageCounts {
  completedEnvelopes: number;
  addOns: { smsOtp: number; idCheck: number; qesSignature: number };
  /** Every UTC day of the period up to today (all of it once it ended), days without completions included. */
  daily: Array<{ date: string; completedEnvelopes: number }>;
}

const DAY_MS = 86_400_000;

export async function readUsage(db: Db, organizationId: string, period: Period, now: Date): Promise<PeriodUsageCounts> {
  const [totals, days] = await Promise.all([
    db.$queryRawUnsafe<Array<{ meter: string; n: bigint }>>(
      'SELECT meter, count(*) AS n FROM usage_records WHERE organization_id = $1 AND occurred_at >= $2 AND occurred_at < $3 GROUP BY meter',
      organizationId,
      period.start,
      period.end,
    ),
    db.$queryRawUnsafe<Array<{ day: string; n: bigint }>>(
      `SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*) AS n FROM usage_records
       WHERE organization_id = $1 AND meter = 'envelopes' AND occurred_at >= $2 AND occurred_at < $3 GROUP BY day`,
      organizationId,
      period.start,
      period.end,
    ),
  ]);
  const byMeter = new Map<Meter, number>(METERS.map((m) => [m, 0]));
  for (const row of totals) byMeter.set(row.meter as Meter, Number(row.n));
  const byDay = new Map(days.map((row) => [row.day, Number(row.n)]));
  return {
    completedEnvelopes: byMeter.get('envelopes') ?? 0,
    addOns: { smsOtp: byMeter.get('smsOtp') ?? 0, idCheck: byMeter.get('idCheck') ?? 0, qesSignature: byMeter.get('qesSignature') ?? 0 },
    daily: daysOf(period, now).map((date) => ({ date, completedEnvelopes: byDay.get(date) ?? 0 })),
  };
}

/** The UTC dates of a period up to and including today's. */
export function daysOf(period: Period, now: Date): string[] {
  const last = Math.min(period.end.getTime() - 1, now.getTime());
  const first = Date.UTC(period.start.getUTCFullYear(), period.start.getUTCMonth(), period.start.getUTCDate());
  const dates: string[] = [];
  for (let t = first; t <= last && dates.length < 400; t += DAY_MS) dates.push(new Date(t).toISOString().slice(0, 10));
  return dates;
}
