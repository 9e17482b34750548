import type { Express, Request } from 'express';
import { createSigilApp, uploadedFile, type OperationContext } from '@sigil/kit/api';
import type { PrincipalVerifier } from '@sigil/kit/auth';
import { mountHealth, type Health, type ReadinessCheck } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { loadSigilOpenApi } from '@sigil/proto/openapi';
import type { FileStore } from '@strata/stream/file-store';
import type { Mailer, SmsProvider } from '@sigil/mail';
import { createAccess, type Signer } from './access.ts';
import { createAttachmentService } from './attachments.ts';
import type { Db } from './db.ts';
import type { EnvelopesClient } from './envelopes-client.ts';
import { createOtpService } from './otp.ts';
import { createSigningService } from './signing.ts';

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
}

const BEARER = /^Bearer\s+(\S+)$/i;

export async function createApp(deps: SigningAppDeps): Promise<{ app: Express; health: Health }> {
  const clock = deps.clock ?? (() => new Date());
  const access = createAccess({ db: deps.db, envelopes: deps.envelopes, clock, accessTokenTtlSeconds: deps.accessTokenTtlSeconds ?? 1800 });
  const attachments = createAttachmentService({ db: deps.db, store: deps.store, envelopes: deps.envelopes });
  const signing = createSigningService({ envelopes: deps.envelopes, attachments });
  const otp = createOtpService({ db: deps.db, envelopes: deps.envelopes, mailer: deps.mailer, sms: deps.sms, clock });
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
    },
    tokenSchemes: {
      signerToken: async (req) => {
        const bearer = BEARER.exec(String(req.headers.authorization ?? ''))?.[1];
        const signer = bearer ? await access.resolve(bearer) : undefined;
        if (signer) signers.set(req, signer);
        return signer !== undefined;
      },
    },
    publicHandlers: {
      exchangeSigningToken: async ({ body }) => ({ status: 200, body: await access.exchange(body.token) }),
    },
    tokenHandlers: {
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
  return { app, health: health as Health };
}
