import type { Express } from 'express';
import { createSigilApp } from '@sigil/kit/api';
import type { PrincipalVerifier } from '@sigil/kit/auth';
import { mountHealth, type Health, type ReadinessCheck } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { listLimit } from '@sigil/kit/pagination';
import { loadSigilOpenApi } from '@sigil/proto/openapi';
import { createAuditService } from './audit.ts';
import type { AppendListener } from './appended.ts';
import type { Db } from './db.ts';
import { createTrailStream } from './stream.ts';

export interface EvidenceAppDeps {
  db: Db;
  log: Logger;
  verifyPrincipal: PrincipalVerifier;
  /** Appends committed by any replica (Postgres notifications), for the live streams. */
  appended: AppendListener;
  keepAliveMs?: number;
  readiness?: Record<string, ReadinessCheck>;
}

export async function createApp(deps: EvidenceAppDeps): Promise<{ app: Express; health: Health }> {
  const audit = createAuditService({ db: deps.db });
  const stream = createTrailStream({ audit, appended: deps.appended, log: deps.log, keepAliveMs: deps.keepAliveMs });
  let health: Health | undefined;
  const app = await createSigilApp({
    document: loadSigilOpenApi(),
    service: 'evidence',
    log: deps.log,
    verifyPrincipal: deps.verifyPrincipal,
    db: deps.db,
    mount: (app) => {
      health = mountHealth(app, { database: async () => void (await deps.db.$queryRawUnsafe('SELECT 1')), ...deps.readiness });
    },
    handlers: {
      streamEnvelopeEvents: async ({ principal, params, req, res }) => {
        await stream(principal, params.id as string, req, res);
      },
      listEnvelopeEvents: async ({ principal, params, query }) => ({
        status: 200,
        body: await audit.list(principal, params.id as string, { limit: listLimit(query), cursor: query.cursor as string | undefined }),
      }),
    },
  });
  return { app, health: health as Health };
}
