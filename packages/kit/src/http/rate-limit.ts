import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';

export interface RateLimitRule {
  /** Names the counters (`verify`, `anchors`): two rules never share them. */
  name: string;
  points: number;
  durationSec: number;
}

/** The table every replica counts in (created by the service's migration; docs/architecture.md). */
export const RATE_LIMIT_TABLE = 'rate_limits';

/**
 * A limiter counted in Postgres, so every replica shares one count per client. When Postgres cannot answer, an
 * in-process limiter with the same rule takes over (counts per replica), so an outage neither blocks nor unlimits.
 */
export function postgresRateLimiter(pool: pg.Pool, rule: RateLimitRule): RateLimiterAbstract {
  return new RateLimiterPostgres({
    storeClient: pool,
    tableName: RATE_LIMIT_TABLE,
    tableCreated: true,
    clearExpiredByTimeout: true,
    keyPrefix: rule.name,
    points: rule.points,
    duration: rule.durationSec,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: rule.name, points: rule.points, duration: rule.durationSec }),
  });
}

/**
 * Counts each request against the caller's key and answers with `RateLimit-Limit`, `RateLimit-Remaining` and
 * `RateLimit-Reset` (seconds) on every answer, the 429 included, which also carries `Retry-After`.
 */
export function rateLimit(limiter: RateLimiterAbstract, options: { key: (req: Request) => string; log: Logger }): RequestHandler {
  const headers = (res: Response, result: RateLimiterRes) => {
    const reset = Math.max(0, Math.ceil(result.msBeforeNext / 1000));
    res.setHeader('RateLimit-Limit', String(limiter.points));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, result.remainingPoints)));
    res.setHeader('RateLimit-Reset', String(reset));
    return reset;
  };
  return (req: Request, res: Response, next: NextFunction) => {
    limiter.consume(options.key(req)).then(
      (result) => {
        headers(res, result);
        next();
      },
      (rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) {
          // Both stores failed: serve the request rather than refuse everyone.
          options.log.error({ err: rejection }, 'rate limiter unavailable; request let through');
          return next();
        }
        const wait = Math.max(1, headers(res, rejection));
        res.setHeader('Retry-After', String(wait));
        next(new AppError('rate-limited', `Too many requests: at most ${limiter.points} per ${limiter.duration} s from one address. Retry in ${wait} s.`));
      },
    );
  };
}
