import type { Express, Request } from 'express';
import type pg from 'pg';
import { createSigilApp } from '@sigil/kit/api';
import { mountSubgraph } from '@sigil/kit/graphql';
import type { PrincipalVerifier } from '@sigil/kit/auth';
import { clientAddress, mountHealth, type Health, type ReadinessCheck } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { listLimit } from '@sigil/kit/pagination';
import { postgresRateLimiter, rateLimit } from '@sigil/kit/rate-limit';
import { loadSigilOpenApi } from '@sigil/proto/openapi';
import { createAuditService } from './audit.ts';
import type { AppendListener } from './appended.ts';
import type { Db } from './db.ts';
import { createPublicLog } from './log/public.ts';
import { createTrailStream } from './stream.ts';
import { createResolvers, typeDefs } from './subgraph.ts';

/** Requests per minute per client address (spec part 8): verify, and the anchors and keys. */
export interface PublicRateLimits {
  verifyPerMinute: number;
  publicPerMinute: number;
}

export interface EvidenceAppDeps {
  db: Db;
  /** Holds the shared rate-limit counters. */
  pool: pg.Pool;
  log: Logger;
  verifyPrincipal: PrincipalVerifier;
  /** Appends committed by any replica (Postgres notifications), for the live streams. */
  appended: AppendListener;
  keepAliveMs?: number;
  rateLimits?: Partial<PublicRateLimits>;
  /** Proxies in front whose X-Forwarded-For hops are trusted (the gateway: 1). */
  trustedProxies?: number;
  readiness?: Record<string, ReadinessCheck>;
}

const IMMUTABLE = { 'cache-control': 'public, max-age=31536000, immutable' };

export async function createApp(deps: EvidenceAppDeps): Promise<{ app: Express; health: Health }> {
  const audit = createAuditService({ db: deps.db });
  const stream = createTrailStream({ audit, appended: deps.appended, log: deps.log, keepAliveMs: deps.keepAliveMs });
  const publicLog = createPublicLog({ db: deps.db });
  const key = (req: Request) => clientAddress(req, deps.trustedProxies ?? 1);
  const limited = (name: string, points: number) => rateLimit(postgresRateLimiter(deps.pool, { name, points, durationSec: 60 }), { key, log: deps.log });
  let health: Health | undefined;
  const app = await createSigilApp({
    document: loadSigilOpenApi(),
    service: 'evidence',
    log: deps.log,
    verifyPrincipal: deps.verifyPrincipal,
    db: deps.db,
    mount: async (app) => {
      health = mountHealth(app, { database: async () => void (await deps.db.$queryRawUnsafe('SELECT 1')), ...deps.readiness });
      await mountSubgraph(app, { typeDefs, resolvers: createResolvers({ db: deps.db, audit, publicLog }), verifyPrincipal: deps.verifyPrincipal });
      const anchors = limited('public', deps.rateLimits?.publicPerMinute ?? 240);
      app.use('/v1/public/verify', limited('verify', deps.rateLimits?.verifyPerMinute ?? 60));
      app.use('/v1/public/anchors', anchors);
      app.use('/.well-known/sigil/keys.json', anchors);
    },
    handlers: {
      streamEnvelopeEvents: async ({ principal, params, req, res }) => {
        await stream(principal, params.id, req, res);
      },
      listEnvelopeEvents: async ({ principal, params, query }) => ({
        status: 200,
        body: await audit.list(principal, params.id, { limit: listLimit(query), cursor: query.cursor }),
      }),
    },
    publicHandlers: {
      getEvidenceKeys: async () => ({ status: 200, body: await publicLog.keys(), headers: { 'cache-control': 'public, max-age=300' } }),
      listAnchors: async ({ query }) => ({
        status: 200,
        body: await publicLog.listAnchors({ mode: query.mode ?? 'live', limit: listLimit(query), cursor: query.cursor }),
      }),
      getLatestAnchor: async ({ query }) => ({ status: 200, body: await publicLog.latestAnchor(query.mode ?? 'live') }),
      getAnchor: async ({ params }) => ({ status: 200, body: await publicLog.anchor(Number(params.sequence)), headers: IMMUTABLE }),
      getAnchorConsistency: async ({ params, query }) => ({ status: 200, body: await publicLog.consistency(query.from, Number(params.sequence)), headers: IMMUTABLE }),
      verifyDocument: async ({ body }) => ({ status: 200, body: await publicLog.verify(body.sha256) }),
    },
  });
  return { app, health: health as Health };
}
