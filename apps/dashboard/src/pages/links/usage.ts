/** How the signing-links page words a link's usage and limits (pure, so a unit test reads them). */

export interface LinkLimits {
  perEmailPerDay: number;
  perIpPerHour: number;
  dailyCap?: number | null;
}

export interface LinkUsage {
  today: number;
  total: number;
}

/** The API's defaults for a new link (SigningLinkLimits in the contract). */
export const DEFAULT_LIMITS = { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: null } as const satisfies LinkLimits;

/** Today's envelopes against the daily cap: "3 of 50 today", or "3 today" when the link has none. */
export function todayWords(usage: LinkUsage, limits: LinkLimits): string {
  return limits.dailyCap == null ? `${usage.today} today` : `${usage.today} of ${limits.dailyCap} today`;
}

/** How full today's cap is, 0 to 1; undefined without a cap (nothing to fill). */
export function capShare(usage: LinkUsage, limits: LinkLimits): number | undefined {
  if (limits.dailyCap == null || limits.dailyCap <= 0) return undefined;
  return Math.min(1, usage.today / limits.dailyCap);
}

/** Whether today's cap is reached: the next visitor is turned away until tomorrow (UTC). */
export function capReached(usage: LinkUsage, limits: LinkLimits): boolean {
  return limits.dailyCap != null && usage.today >= limits.dailyCap;
}

const times = (n: number) => (n === 1 ? 'once' : `${n} times`);

/** The per-visitor limits in words: "3 times per e-mail a day · 20 times per IP address an hour". */
export function limitWords(limits: LinkLimits): string {
  return `${times(limits.perEmailPerDay)} per e-mail a day · ${times(limits.perIpPerHour)} per IP address an hour`;
}

/** "1 envelope" / "12 envelopes". */
export function envelopes(n: number): string {
  return n === 1 ? '1 envelope' : `${n} envelopes`;
}
