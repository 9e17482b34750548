import type { Express, Request } from 'express';
import type pg from 'pg';
import { createSigilApp, uploadedFile, type OperationContext } from '@sigil/kit/api';
import type { PrincipalVerifier } from '@sigil/kit/auth';
import { AppError } from '@sigil/kit/errors';
import { clientAddress, mountHealth, type Health, type ReadinessCheck } from '@sigil/kit/http';
import { postgresRateLimiter, rateLimit } from '@sigil/kit/rate-limit';
import type { ViewerGrant } from '@sigil/proto/internal-viewers';
import type { Logger } from '@sigil/kit/log';
import { loadSigilOpenApi } from '@sigil/proto/openapi';
import type { FileStore } from '@strata/stream/file-store';
import { brandedName, type Mailer, type SmsProvider } from '@sigil/mail';
import { brandingOrNone, type BrandingCache } from '@sigil/kit/branding';
import { createAccess, type Signer } from './access.ts';
import { createAttachmentService } from './attachments.ts';
import type { Db } from './db.ts';
import type { EnvelopesClient } from './envelopes-client.ts';
import { createOtpService } from './otp.ts';
import { createLinkCaps } from './link-caps.ts';
import { createLinkCodeSender, type LinkCodeSender } from './link-code-mail.ts';
import { createLinkService, LINK_CODE, type LinkService } from './links.ts';
import type { LinksClient } from './links-client.ts';
import { createSigningService } from './signing.ts';
import { createViewerAccess } from './viewer-access.ts';
import { createViewerStreams, type EventFeed } from './viewer-stream.ts';
import type { ViewersClient } from './viewers-client.ts';

export interface SigningAppDeps {
  db: Db;
  log: Logger;
  verifyPrincipal: PrincipalVerifier;
  envelopes: EnvelopesClient;
  clock?: () => Date;
  accessTokenTtlSeconds?: number;
  /** Where attachments are stored, and the largest one (default 10 MiB). */
  store: FileStore;
  attachmentMaxBytes?: number;
  /** Where one-time codes go: e-mail, and SMS through a provider. */
  mailer: Mailer;
  sms: SmsProvider;
  readiness?: Record<string, ReadinessCheck>;
  /** Always-on signing links: envelopes' links, and the pool of the shared caps (`rate_limits`); none: link operations are 503 (service tests of signing alone). */
  links?: { client: LinksClient; pool: pg.Pool };
  /** Proxies in front whose X-Forwarded-For hops are trusted (the gateway: 1). */
  trustedProxies?: number;
  /** The public base URL of the hosted signing page; without it, the address the caller reached the gateway at. */
  publicUrl?: string;
  /**
   * Viewers: envelopes' viewer endpoints, the domain events (plain NATS) that wake their streams, and exchanges per client
   * per minute (default 60; counted in `rate_limits` when a pool is given); none: viewer operations are 503.
   */
  viewers?: { client: ViewersClient; feed: EventFeed; pool?: pg.Pool; exchangesPerMinute?: number; heartbeatMs?: number };
  /** The organizations' e-mail branding (accounts', cached): codes' e-mails, and the logo on the signing and viewer pages. */
  branding?: Pick<BrandingCache, 'get'>;
}

const BEARER = /^Bearer\s+(\S+)$/i;

export async function createApp(deps: SigningAppDeps): Promise<{ app: Express; health: Health; linkCodes?: LinkCodeSender }> {
  const clock = deps.clock ?? (() => new Date());
  const access = createAccess({ db: deps.db, envelopes: deps.envelopes, clock, accessTokenTtlSeconds: deps.accessTokenTtlSeconds ?? 1800 });
  const attachments = createAttachmentService({ db: deps.db, store: deps.store, envelopes: deps.envelopes });
  const signing = createSigningService({ envelopes: deps.envelopes, attachments, branding: deps.branding });
  const otp = createOtpService({ db: deps.db, envelopes: deps.envelopes, mailer: deps.mailer, sms: deps.sms, clock, branding: deps.branding, log: deps.log });
  const linkCodes = deps.links ? createLinkCodeSender({ db: deps.db, mailer: deps.mailer, clock, log: deps.log, lifetimeMinutes: LINK_CODE.lifetimeMs / 60_000, branding: deps.branding }) : undefined;
  const linkService = deps.links && linkCodes ? createLinkService({ db: deps.db, links: deps.links.client, caps: createLinkCaps(deps.links.pool), wakeCodeSender: linkCodes.wake, clock }) : undefined;
  const links = (): LinkService => {
    if (!linkService) throw new AppError('service-unavailable', 'Signing links are not configured on this signing service.');
    return linkService;
  };
  const visitorOf = (ctx: OperationContext<'startSigningLink'>) => ({ name: ctx.body.name, email: ctx.body.email, address: clientAddress(ctx.req, deps.trustedProxies ?? 1) });
  const viewerAccess = deps.viewers ? createViewerAccess({ viewers: deps.viewers.client }) : undefined;
  const viewerStreams = deps.viewers ? createViewerStreams({ feed: deps.viewers.feed, log: deps.log, heartbeatMs: deps.viewers.heartbeatMs, clock }) : undefined;
  const viewerSide = () => {
    if (!deps.viewers || !viewerAccess || !viewerStreams) throw new AppError('service-unavailable', 'Viewers are not configured on this signing service.');
    return { client: deps.viewers.client, access: viewerAccess, streams: viewerStreams };
  };
  // The viewer a request's token named (Authorization, or the `access_token` query of an EventSource), found before the handler runs.
  const viewerGrants = new WeakMap<Request, ViewerGrant>();
  const viewerOf = (ctx: OperationContext): ViewerGrant => viewerGrants.get(ctx.req) as ViewerGrant;
  // The signer a request's bearer token named, found by the security check before the handler runs.
  const signers = new WeakMap<Request, Signer>();
  const signerOf = (ctx: OperationContext): Signer => signers.get(ctx.req) as Signer;
  const actorOf = (ctx: OperationContext) => ({ from: ctx.from, userAgent: String(ctx.req.headers['user-agent'] ?? '').slice(0, 1000) });
  let health: Health | undefined;
  const app = await createSigilApp({
    document: loadSigilOpenApi(),
    service: 'signing',
    log: deps.log,
    verifyPrincipal: deps.verifyPrincipal,
    db: deps.db,
    multipartLimit: deps.attachmentMaxBytes ?? 10 * 1024 * 1024,
    mount: (app) => {
      health = mountHealth(app, { database: async () => void (await deps.db.$queryRawUnsafe('SELECT 1')), ...deps.readiness });
      if (deps.viewers?.pool) {
        const limiter = postgresRateLimiter(deps.viewers.pool, { name: 'viewer-exchange', points: deps.viewers.exchangesPerMinute ?? 60, durationSec: 60 });
        app.use('/v1/viewer/exchange', rateLimit(limiter, { key: (req) => clientAddress(req, deps.trustedProxies ?? 1), log: deps.log }));
      }
    },
    tokenSchemes: {
      viewerToken: async (req) => {
        const token = BEARER.exec(String(req.headers.authorization ?? ''))?.[1] ?? (typeof req.query.access_token === 'string' ? req.query.access_token : undefined);
        const viewer = token ? await viewerSide().access.resolve(token) : undefined;
        if (viewer) viewerGrants.set(req, viewer);
        return viewer !== undefined;
      },
      signerToken: async (req) => {
        const bearer = BEARER.exec(String(req.headers.authorization ?? ''))?.[1];
        const signer = bearer ? await access.resolve(bearer) : undefined;
        if (signer) signers.set(req, signer);
        return signer !== undefined;
      },
    },
    publicHandlers: {
      exchangeSigningToken: async ({ body }) => ({ status: 200, body: await access.exchange(body.token) }),
      exchangeViewerToken: async ({ body }) => ({ status: 200, headers: { 'cache-control': 'no-store' }, body: await viewerSide().access.exchange(body.token) }),
      getPublicSigningLink: async ({ params }) => ({ status: 200, headers: { 'cache-control': 'no-store' }, body: await links().view(params.id) }),
      startSigningLink: async (ctx) => {
        const started = await links().start(ctx.params.id, visitorOf(ctx));
        return { status: 202, headers: started.headers, body: started.body };
      },
      verifySigningLink: async ({ params, body, req }) => ({ status: 201, headers: { 'cache-control': 'no-store' }, body: await links().verify(params.id, body as typeof body & { verification?: string }, deps.publicUrl ?? publicUrlOf(req)) }),
    },
    tokenHandlers: {
      getViewerEnvelope: async (ctx) => {
        const { client } = viewerSide();
        const view = await client.view(viewerOf(ctx));
        await client.opened(viewerOf(ctx));
        const brand = await brandingOrNone(deps.branding, viewerOf(ctx).organizationId, deps.log);
        return { status: 200, headers: { 'cache-control': 'no-store' }, body: { ...view, organizationName: brandedName(view.organizationName, brand), logoUrl: brand?.logoUrl ?? null } };
      },
      getViewerDocument: async (ctx) => ({
        status: 200,
        headers: { 'content-type': 'application/pdf', 'content-disposition': `inline; filename="${viewerOf(ctx).envelopeId}.pdf"`, 'cache-control': 'no-store' },
        body: await viewerSide().client.document(viewerOf(ctx)),
      }),
      streamViewerUpdates: async (ctx) => {
        await viewerSide().streams.serve(viewerOf(ctx), ctx.req, ctx.res);
      },
      getSigningSession: async (ctx) => ({ status: 200, headers: { 'cache-control': 'no-store' }, body: await signing.session(signerOf(ctx), actorOf(ctx)) }),
      getSigningDocument: async (ctx) => ({
        status: 200,
        headers: { 'content-type': 'application/pdf', 'content-disposition': `inline; filename="${signerOf(ctx).envelopeId}.pdf"`, 'cache-control': 'no-store' },
        body: await signing.document(signerOf(ctx)),
      }),
      sendSigningOtp: async (ctx) => ({ status: 202, body: await otp.send(signerOf(ctx), ctx.body?.channel, actorOf(ctx)) }),
      verifySigningOtp: async (ctx) => ({ status: 200, body: await otp.verify(signerOf(ctx), ctx.body.code, actorOf(ctx)) }),
      uploadSigningAttachment: async (ctx) => ({
        status: 201,
        body: await attachments.upload(signerOf(ctx), String(ctx.body.field ?? ''), uploadedFile(ctx.req, 'file'), actorOf(ctx)),
      }),
      submitSigning: async (ctx) => ({ status: 200, body: await signing.submit(signerOf(ctx), ctx.body, actorOf(ctx)) }),
      declineSigning: async (ctx) => ({ status: 200, body: await signing.decline(signerOf(ctx), ctx.body?.reason, actorOf(ctx)) }),
    },
  });
  return { app, health: health as Health, linkCodes };
}

/** The address the visitor reached the gateway at (the gateway always sends the forwarded protocol and host). */
function publicUrlOf(req: Request): string {
  const proto = String(req.headers['x-forwarded-proto'] ?? 'http').split(',')[0]?.trim();
  const host = String(req.headers['x-forwarded-host'] ?? req.headers.host ?? 'localhost').split(',')[0]?.trim();
  return `${proto}://${host}`;
}
