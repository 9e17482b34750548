/**
 * Billing periods: a paid plan's is its subscription's (the processor says when it starts and ends); Free's is the
 * calendar month in UTC. `GET /v1/usage?period=YYYY-MM` names a month.
 */

export interface Period {
  start: Date;
  end: Date;
}

/** The UTC calendar month holding a moment: [first day 00:00Z, first day of the next month 00:00Z). */
export function calendarMonth(at: Date): Period {
  return { start: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)), end: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)) };
}

/** `YYYY-MM` (month 01 to 12) as its calendar month; undefined when it is not one. */
export function monthPeriod(text: string): Period | undefined {
  const match = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(text);
  if (!match) return undefined;
  return calendarMonth(new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)));
}

/** The `YYYY-MM` a period is named by: the month it starts in (UTC). */
export const periodName = (period: Period): string => period.start.toISOString().slice(0, 7);
