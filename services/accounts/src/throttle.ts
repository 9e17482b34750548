import { AppError, type SqlClient } from '@sigil/kit';
import { sha256Hex } from './tokens.ts';

/**
 * Fixed-window attempt counters in Postgres (shared by every replica). `hit` counts an attempt atomically and
 * says whether it is within the limit; a successful credential check `reset`s the counter.
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

/** Sign-in: 10 attempts per 15 minutes for one e-mail from one address; 100 per 15 minutes from one address. */
export const SIGN_IN_PER_EMAIL_IP: ThrottleRule = { name: 'sign-in:email-ip', limit: 10, windowSeconds: 15 * 60 };
export const SIGN_IN_PER_IP: ThrottleRule = { name: 'sign-in:ip', limit: 100, windowSeconds: 15 * 60 };
/** Sign-up and invitation acceptance: 20 per hour from one address. */
export const SIGN_UP_PER_IP: ThrottleRule = { name: 'sign-up:ip', limit: 20, windowSeconds: 60 * 60 };
export const ACCEPT_INVITATION_PER_IP: ThrottleRule = { name: 'accept-invitation:ip', limit: 20, windowSeconds: 60 * 60 };

export interface Throttle {
  hit(rule: ThrottleRule, subject: string): Promise<ThrottleResult>;
  reset(rule: ThrottleRule, subject: string): Promise<void>;
  /** Counts one attempt against every rule; throws 429 `rate-limited` if any is exceeded. */
  enforce(checks: Array<[ThrottleRule, string]>): Promise<void>;
  purgeExpired(): Promise<number>;
}

const keyOf = (rule: ThrottleRule, subject: string) => sha256Hex(`${rule.name}\n${subject}`);

export function createThrottle(db: SqlClient): Throttle {
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
