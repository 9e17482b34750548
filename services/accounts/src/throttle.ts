import { AppError } from '@sigil/kit/errors';
import { type SqlClient } from '@sigil/kit/db';
import { sha256Hex } from './tokens.ts';

/**
 * Fixed-window attempt counters in Postgres (shared by every replica). `hit` counts an attempt atomically and
 * says whether it is within the limit; a successful credential check `reset`s the counter.
 *
 * Why not the kit's limiter (`@sigil/kit/rate-limit`, docs/decisions.md): its `rateLimit` middleware counts a request
 * by address before the contract reads the body. These limits count inside the use case once the body is valid,
 * sign-in's by the normalised e-mail with the address as well as by the address (one 429, the longest wait), and a
 * correct password clears the e-mail's counter. The kit's store (`postgresRateLimiter`) could hold such counters if
 * called directly, but in its own `rate_limits` table instead of `auth_throttles`: a migration of accounts' database.
 * The windows run on Postgres's clock (`now()`), the one every replica shares, not on the service's injected clock.
 */
export interface ThrottleRule {
  /** Namespaces the key, e.g. `sign-in:email-ip`. */
  name: string;
  limit: number;
  windowSeconds: number;
}

export interface ThrottleResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window ends. */
  resetSeconds: number;
}

export interface AuthRateLimits {
  signInPerEmailIp: ThrottleRule;
  signInPerIp: ThrottleRule;
  signUpPerIp: ThrottleRule;
  acceptInvitationPerIp: ThrottleRule;
}

/**
 * Sign-in: 10 attempts per 15 minutes for one e-mail from one address, 100 per 15 minutes from one address.
 * Sign-up and invitation acceptance: 30 per hour from one address.
 */
export const DEFAULT_RATE_LIMITS: AuthRateLimits = {
  signInPerEmailIp: { name: 'sign-in:email-ip', limit: 10, windowSeconds: 15 * 60 },
  signInPerIp: { name: 'sign-in:ip', limit: 100, windowSeconds: 15 * 60 },
  signUpPerIp: { name: 'sign-up:ip', limit: 30, windowSeconds: 60 * 60 },
  acceptInvitationPerIp: { name: 'accept-invitation:ip', limit: 30, windowSeconds: 60 * 60 },
};

/** Overrides of the attempt counts (windows stay), e.g. from the environment of a load-test stack. */
export type RateLimitOverrides = Partial<Record<keyof AuthRateLimits, number>>;

export function rateLimitsWith(overrides: RateLimitOverrides = {}): AuthRateLimits {
  const limits = { ...DEFAULT_RATE_LIMITS };
  for (const [name, limit] of Object.entries(overrides) as Array<[keyof AuthRateLimits, number | undefined]>) {
    if (limit !== undefined) limits[name] = { ...limits[name], limit };
  }
  return limits;
}

export interface Throttle {
  readonly rules: AuthRateLimits;
  hit(rule: ThrottleRule, subject: string): Promise<ThrottleResult>;
  reset(rule: ThrottleRule, subject: string): Promise<void>;
  /** Counts one attempt against every rule; throws 429 `rate-limited` if any is exceeded. */
  enforce(checks: Array<[ThrottleRule, string]>): Promise<void>;
  purgeExpired(): Promise<number>;
}

const keyOf = (rule: ThrottleRule, subject: string) => sha256Hex(`${rule.name}\n${subject}`);

export function createThrottle(db: SqlClient, rules: AuthRateLimits = DEFAULT_RATE_LIMITS): Throttle {
  const hit = async (rule: ThrottleRule, subject: string): Promise<ThrottleResult> => {
    const rows = await db.$queryRawUnsafe<{ attempts: number; reset_seconds: number }[]>(
      `INSERT INTO auth_throttles (key, attempts, expires_at) VALUES ($1, 1, now() + make_interval(secs => $2))
       ON CONFLICT (key) DO UPDATE SET
         attempts = CASE WHEN auth_throttles.expires_at <= now() THEN 1 ELSE auth_throttles.attempts + 1 END,
         expires_at = CASE WHEN auth_throttles.expires_at <= now() THEN EXCLUDED.expires_at ELSE auth_throttles.expires_at END
       RETURNING attempts, GREATEST(1, CEIL(EXTRACT(EPOCH FROM (expires_at - now()))))::int AS reset_seconds`,
      keyOf(rule, subject),
      rule.windowSeconds,
    );
    const row = rows[0] as { attempts: number; reset_seconds: number };
    return {
      allowed: row.attempts <= rule.limit,
      limit: rule.limit,
      remaining: Math.max(0, rule.limit - row.attempts),
      resetSeconds: row.reset_seconds,
    };
  };

  return {
    rules,
    hit,
    async reset(rule, subject) {
      await db.$executeRawUnsafe(`DELETE FROM auth_throttles WHERE key = $1`, keyOf(rule, subject));
    },
    async enforce(checks) {
      let blocked: ThrottleResult | undefined;
      for (const [rule, subject] of checks) {
        const result = await hit(rule, subject);
        if (!result.allowed && (!blocked || result.resetSeconds > blocked.resetSeconds)) blocked = result;
      }
      if (blocked) throw rateLimited(blocked);
    },
    purgeExpired() {
      return db.$executeRawUnsafe(`DELETE FROM auth_throttles WHERE expires_at <= now()`);
    },
  };
}

export function rateLimited(result: ThrottleResult): AppError {
  const seconds = String(result.resetSeconds);
  return new AppError('rate-limited', `Too many attempts. Try again in ${seconds} seconds.`, {
    headers: { 'retry-after': seconds, 'ratelimit-limit': String(result.limit), 'ratelimit-remaining': '0', 'ratelimit-reset': seconds },
  });
}
