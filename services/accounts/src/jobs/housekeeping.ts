import type { Logger } from '@sigil/kit/log';
import type { Db } from '../db.ts';
import { createThrottle } from '../throttle.ts';
import { purgeExpiredSsoState } from '../sso/login-state.ts';

export interface HousekeepingOptions {
  db: Db;
  log: Logger;
  purgeIdempotencyKeys: () => Promise<number>;
  clock: () => Date;
  intervalMs?: number;
}

/** Sessions and invitations ended more than this long ago are deleted. */
const RETAIN_ENDED_DAYS = 30;

/**
 * Deletes what no longer matters: finished attempt windows, expired idempotency keys, long-ended sessions and
 * invitations. Every statement is an idempotent DELETE, so replicas may run it concurrently.
 */
export async function runHousekeeping(db: Db, purgeIdempotencyKeys: () => Promise<number>, now: Date): Promise<Record<string, number>> {
  const cutoff = new Date(now.getTime() - RETAIN_ENDED_DAYS * 24 * 60 * 60 * 1000);
  return {
    throttles: await createThrottle(db).purgeExpired(),
    idempotencyKeys: await purgeIdempotencyKeys(),
    sessions: (await db.session.deleteMany({ where: { OR: [{ expiresAt: { lt: cutoff } }, { revokedAt: { lt: cutoff } }] } })).count,
    invitations: (
      await db.invitation.deleteMany({ where: { acceptedAt: null, OR: [{ expiresAt: { lt: cutoff } }, { revokedAt: { lt: cutoff } }] } })
    ).count,
    ssoLoginState: await purgeExpiredSsoState(db, now),
  };
}

export function startHousekeeping(options: HousekeepingOptions): { stop(): void } {
  const { db, log, purgeIdempotencyKeys, clock, intervalMs = 60 * 60 * 1000 } = options;
  const tick = () => {
    runHousekeeping(db, purgeIdempotencyKeys, clock()).then(
      (deleted) => log.debug({ deleted }, 'housekeeping done'),
      (error) => log.warn({ err: error }, 'housekeeping failed'),
    );
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();
  return { stop: () => clearInterval(timer) };
}
