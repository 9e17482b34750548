import type { Express, Request } from 'express';
import { createSigilApp } from '@sigil/kit/api';
import type { PrincipalVerifier } from '@sigil/kit/auth';
import { mountSubgraph } from '@sigil/kit/graphql';
import { mountHealth, type Health, type ReadinessCheck } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { listLimit } from '@sigil/kit/pagination';
import { loadSigilOpenApi } from '@sigil/proto/openapi';
import type { FileStore } from '@strata/stream/file-store';
import type { EntitlementsCache } from '@sigil/kit/entitlements';
import { flagSet } from './caller.ts';
import { createEnvelopeCreator } from './create.ts';
import type { Db } from './db.ts';
import { createEnvelopeService } from './envelopes.ts';
import { mountInternalRoutes } from './internal-routes.ts';
import type { MailDeps } from './mail/outbox-mail.ts';
import { resendLink } from './mail/resend.ts';
import { createSealedDocuments } from './sealed.ts';
import { createLinkVisitors } from './link-visitors.ts';
import { mountLinkRoutes } from './link-routes.ts';
import { createSigningLinkService } from './signing-links.ts';
import { createPlanLimits } from './plan-limits.ts';
import { createSignerService } from './signer.ts';
import { createTokenService } from './tokens.ts';
import { createViewerAccess } from './viewer-access.ts';
import { mountViewerRoutes } from './viewer-routes.ts';
import { createViewerService } from './viewers.ts';
import { createResolvers, typeDefs } from './subgraph.ts';
import type { TemplatesClient } from './templates-client.ts';

export interface EnvelopesAppDeps {
  db: Db;
  log: Logger;
  verifyPrincipal: PrincipalVerifier;
  templates: TemplatesClient;
  /** The organization's plan entitlements (billing's); none: no plan limit applies (a service test of sending alone). */
  entitlements?: EntitlementsCache;
  store: FileStore;
  clock?: () => Date;
  defaultExpiryDays?: number;
  /** The job subjects' cell (CONSUMER_PREFIX), as the render consumer has it. */
  cell?: string;
  /** Lifetime of a signing session minted through the API (default 5 minutes). */
  sessionTtlSeconds?: number;
  /** The public base URL of the hosted signing page; without it, the address the caller reached the gateway at. */
  publicUrl?: string;
  /** E-mail (resends); the same dependencies the mail consumer and the reminders use. */
  mail: Omit<MailDeps, 'db' | 'clock' | 'store'>;
  readiness?: Record<string, ReadinessCheck>;
  /** How long creating a signing link's envelope waits for its document before answering the session (default 15 s). */
  linkRenderWaitMs?: number;
}

export async function createApp(deps: EnvelopesAppDeps): Promise<{ app: Express; health: Health }> {
  const clock = deps.clock ?? (() => new Date());
  const planLimits = deps.entitlements ? createPlanLimits({ db: deps.db, entitlements: deps.entitlements }) : undefined;
  const creator = createEnvelopeCreator({ db: deps.db, templates: deps.templates, clock, defaultExpiryDays: deps.defaultExpiryDays ?? 30, cell: deps.cell, planLimits });
  const envelopes = createEnvelopeService({ db: deps.db, store: deps.store, clock });
  const tokens = createTokenService({ db: deps.db, clock, sessionTtlSeconds: deps.sessionTtlSeconds ?? 300 });
  const signer = createSignerService({ db: deps.db, store: deps.store, clock });
  const viewers = createViewerService({ db: deps.db, clock, planLimits });
  const links = createSigningLinkService({ db: deps.db, templates: deps.templates, clock, entitlements: deps.entitlements });
  const linkVisitors = createLinkVisitors({ db: deps.db, creator, clock, entitlements: deps.entitlements, branding: deps.mail.branding, sessionTtlSeconds: deps.sessionTtlSeconds ?? 300, renderWaitMs: deps.linkRenderWaitMs });
  let health: Health | undefined;
  const app = await createSigilApp({
    document: loadSigilOpenApi(),
    service: 'envelopes',
    log: deps.log,
    verifyPrincipal: deps.verifyPrincipal,
    db: deps.db,
    mount: async (app) => {
      health = mountHealth(app, { database: async () => void (await deps.db.$queryRawUnsafe('SELECT 1')), ...deps.readiness });
      await mountSubgraph(app, { typeDefs, resolvers: createResolvers({ envelopes, links, publicUrl: deps.publicUrl ?? '' }), verifyPrincipal: deps.verifyPrincipal });
      mountLinkRoutes(app, { verifyPrincipal: deps.verifyPrincipal, visitors: linkVisitors });
      mountInternalRoutes(app, { verifyPrincipal: deps.verifyPrincipal, tokens, signer, sealed: createSealedDocuments({ db: deps.db, store: deps.store, clock }) });
      mountViewerRoutes(app, { verifyPrincipal: deps.verifyPrincipal, viewers: createViewerAccess({ db: deps.db, store: deps.store, clock }) });
    },
    handlers: {
      createEnvelope: async ({ principal, body, query }) => {
        const result = await creator.create(principal, body, { dryRun: flagSet(query.dry_run), testModeFlag: query.test_mode });
        if (result.kind === 'dry-run') return { status: 200, body: result.result };
        if (result.kind === 'deduplicated') return { status: 200, headers: { 'x-deduplicated': 'true' }, body: result.envelope };
        return { status: 201, body: result.envelope };
      },
      listEnvelopes: async ({ principal, query }) => ({
        status: 200,
        body: await envelopes.list(principal, {
          limit: listLimit(query),
          cursor: query.cursor,
          status: query.status,
          seal: query.seal,
          q: query.q,
          template: query.template,
          testMode: query.testMode,
        }),
      }),
      getEnvelope: async ({ principal, params }) => ({ status: 200, body: await envelopes.get(principal, params.id) }),
      voidEnvelope: async ({ principal, params, body }) => ({
        status: 200,
        body: await envelopes.void(principal, params.id, body?.reason),
      }),
      createSigningSession: async ({ principal, params, body, req }) => ({
        status: 201,
        body: await tokens.createSession(principal, params.id, body.recipient, deps.publicUrl ?? publicUrlOf(req)),
      }),
      resendEnvelopeRecipient: async ({ principal, params }) => {
        await resendLink({ ...deps.mail, db: deps.db, clock, store: deps.store }, principal, params.id, params.recipient);
        return { status: 204 };
      },
      addEnvelopeViewers: async ({ principal, params, body }) => ({ status: 201, body: await viewers.add(principal, params.id, body.viewers) }),
      revokeEnvelopeViewer: async ({ principal, params }) => {
        await viewers.revoke(principal, params.id, params.viewer);
        return { status: 204 };
      },
      createSigningLink: async ({ principal, body, req }) => ({ status: 201, body: await links.create(principal, body, deps.publicUrl ?? publicUrlOf(req)) }),
      listSigningLinks: async ({ principal, query, req }) => ({ status: 200, body: await links.list(principal, { limit: listLimit(query), cursor: query.cursor }, deps.publicUrl ?? publicUrlOf(req)) }),
      updateSigningLink: async ({ principal, params, body, req }) => ({ status: 200, body: await links.update(principal, params.id, body, deps.publicUrl ?? publicUrlOf(req)) }),
      deleteSigningLink: async ({ principal, params }) => {
        await links.remove(principal, params.id);
        return { status: 204 };
      },
      getEnvelopeDocument: async ({ principal, params, query }) => {
        const version = query.version ?? 'original';
        return {
          status: 200,
          headers: { 'content-type': 'application/pdf', 'content-disposition': `inline; filename="${params.id}-${version}.pdf"` },
          body: await envelopes.document(principal, params.id, version),
        };
      },
    },
  });
  return { app, health: health as Health };
}

/** The address the caller reached the gateway at (the gateway always sends the forwarded protocol and host). */
function publicUrlOf(req: Request): string {
  const proto = String(req.headers['x-forwarded-proto'] ?? 'http').split(',')[0]?.trim();
  const host = String(req.headers['x-forwarded-host'] ?? req.headers.host ?? 'localhost').split(',')[0]?.trim();
  return `${proto}://${host}`;
}
