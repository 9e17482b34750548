import type pg from 'pg';
import { AppError } from '@sigil/kit/errors';
import { postgresRateLimiter } from '@sigil/kit/rate-limit';
import type { SigningLinkLimits } from '@sigil/proto/internal-links';

const HOUR_S = 3600;
const DAY_S = 86_400;

type Limiter = ReturnType<typeof postgresRateLimiter>;
interface LimiterResult {
  remainingPoints: number;
  msBeforeNext: number;
}
/** rate-limiter-flexible rejects a request over its allowance with the count's result (a store failure is an Error). */
const isRefusal = (value: unknown): value is LimiterResult => typeof value === 'object' && value !== null && !(value instanceof Error) && 'msBeforeNext' in value;

/** The `RateLimit-*` headers of an answer (the tighter of the two caps). */
export type CapHeaders = Record<'RateLimit-Limit' | 'RateLimit-Remaining' | 'RateLimit-Reset', string>;

const secondsToNextUtcDay = (now: Date) => Math.max(1, Math.ceil((Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000));

/**
 * The per-visitor caps of a link's `start`, counted in the signing database's `rate_limits` table so every replica
 * shares them: `perEmailPerDay` per link and lower-cased address in a UTC day (the day is part of the key, so the count
 * starts again at midnight UTC), `perIpPerHour` per link and client address in an hour from its first request.
 */
export function createLinkCaps(pool: pg.Pool) {
  // One limiter per rule and allowance: a link whose limits change keeps its counts (the rule's prefix names them).
  const limiters = new Map<string, Limiter>();
  const limiter = (name: 'link-email' | 'link-ip', points: number, durationSec: number) => {
    const key = `${name}:${points}`;
    let found = limiters.get(key);
    if (!found) limiters.set(key, (found = postgresRateLimiter(pool, { name, points, durationSec })));
    return found;
  };

  async function consume(limit: Limiter, key: string, refusal: (wait: number) => string, resetOf: (result: LimiterResult) => number): Promise<CapHeaders> {
    try {
      const result = await limit.consume(key);
      return { 'RateLimit-Limit': String(limit.points), 'RateLimit-Remaining': String(Math.max(0, result.remainingPoints)), 'RateLimit-Reset': String(resetOf(result)) };
    } catch (rejection) {
      if (!isRefusal(rejection)) throw rejection;
      const wait = Math.max(1, resetOf(rejection));
      throw new AppError('rate-limited', refusal(wait), {
        headers: { 'RateLimit-Limit': String(limit.points), 'RateLimit-Remaining': '0', 'RateLimit-Reset': String(wait), 'Retry-After': String(wait) },
      });
    }
  }

  return {
    /** Counts one start; a cap reached is a 429 `rate-limited` with `RateLimit-*` and `Retry-After`. */
    async consume(linkId: string, limits: SigningLinkLimits, visitor: { email: string; address: string }, now: Date): Promise<CapHeaders> {
      const perIp = await consume(
        limiter('link-ip', limits.perIpPerHour, HOUR_S),
        `${linkId}:${visitor.address}`,
        (wait) => `Too many starts from your network on this link (at most ${limits.perIpPerHour} an hour); try again in ${wait} s.`,
        (result) => Math.ceil(result.msBeforeNext / 1000),
      );
      const day = now.toISOString().slice(0, 10);
      const perEmail = await consume(
        limiter('link-email', limits.perEmailPerDay, DAY_S),
        `${linkId}:${visitor.email.toLowerCase()}:${day}`,
        () => `This address has started this link ${limits.perEmailPerDay} ${limits.perEmailPerDay === 1 ? 'time' : 'times'} today, the most a day; try again tomorrow (UTC).`,
        () => secondsToNextUtcDay(now),
      );
      return Number(perEmail['RateLimit-Remaining']) <= Number(perIp['RateLimit-Remaining']) ? perEmail : perIp;
    },
  };
}

export type LinkCaps = ReturnType<typeof createLinkCaps>;

/** The 429 of a link whose `dailyCap` envelopes were created today (UTC). */
export function dailyCapReached(dailyCap: number, now: Date): AppError {
  const wait = secondsToNextUtcDay(now);
  return new AppError('rate-limited', `This link takes at most ${dailyCap} ${dailyCap === 1 ? 'signer' : 'signers'} a day; try again tomorrow (UTC).`, { headers: { 'Retry-After': String(wait) } });
}
