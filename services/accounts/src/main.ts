import path from 'node:path';
import { loadConfig } from '@sigil/kit/config';
import { connectBus, startOutboxRelay } from '@sigil/kit/bus';
import { createLogger } from '@sigil/kit/log';
import { createPrincipalSigner, createPrincipalVerifier } from '@sigil/kit/auth';
import { billingEntitlementsSource, createEntitlementsCache } from '@sigil/kit/entitlements';
import { migrate } from '@sigil/kit/db';
import { purgeExpiredIdempotencyKeys } from '@sigil/kit/api';
import { runServer } from '@sigil/kit/http';
import { createMailer } from '@sigil/mail';
import { createS3FileStore, fileStoreOptions } from '@strata/stream/file-store';
import { brandingChangedSubject } from '@sigil/proto/internal-branding';
import { createApp } from './app.ts';
import { accountsConfig } from './config.ts';
import { createDb } from './db.ts';
import { startInvitationMailConsumer } from './invitation-mail.ts';
import { effectiveBranding } from './branding/branding.ts';
import { startHousekeeping } from './jobs/housekeeping.ts';
import { ssoSecretsKey } from './sso/secrets.ts';

const SERVICE = 'accounts';
const config = loadConfig(accountsConfig);
const log = createLogger(SERVICE, config.LOG_LEVEL);
const clock = () => new Date();

await migrate(config.DATABASE_URL, path.resolve(import.meta.dirname, '../../../prisma/accounts/migrations'));
const db = createDb(config.DATABASE_URL);
const bus = await connectBus(config.NATS_URL, SERVICE, { eventConsumersStartAt: config.EVENT_CONSUMERS_START_AT });
const relay = await startOutboxRelay({ databaseUrl: config.DATABASE_URL, bus, log });
const signPrincipal = await createPrincipalSigner(JSON.parse(config.INTERNAL_JWT_PRIVATE_KEY));
const entitlements = await createEntitlementsCache({ source: billingEntitlementsSource({ baseUrl: config.BILLING_URL, signPrincipal, actorId: SERVICE }), bus, log });
const mailer = createMailer({ url: config.SMTP_URL, from: config.MAIL_FROM });
const logoStore = await createS3FileStore(fileStoreOptions(config));
const branding = (organizationId: string) => effectiveBranding({ db, entitlements, publicUrl: config.PUBLIC_URL }, organizationId);
const invitationMail = await startInvitationMailConsumer(bus, { db, mailer, publicUrl: config.PUBLIC_URL, clock, log, branding }, { cell: config.CONSUMER_PREFIX });
const housekeeping = startHousekeeping({ db, log, clock, purgeIdempotencyKeys: () => purgeExpiredIdempotencyKeys(db) });
const { app, health } = await createApp({
  db,
  log,
  clock,
  cell: config.CONSUMER_PREFIX,
  entitlements,
  publicUrl: config.PUBLIC_URL,
  logoStore,
  notifyBrandingChanged: (organizationId) => bus.notify(brandingChangedSubject(organizationId), { organizationId }),
  sso: { allowedOrigins: config.SSO_ALLOWED_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean), secretsKey: ssoSecretsKey(config) },
  verifyPrincipal: await createPrincipalVerifier(JSON.parse(config.INTERNAL_JWT_PUBLIC_KEY)),
  readiness: { nats: async () => void (await bus.nc.flush()) },
  rateLimits: {
    signInPerEmailIp: config.SIGN_IN_LIMIT_PER_EMAIL_IP,
    signInPerIp: config.SIGN_IN_LIMIT_PER_IP,
    signUpPerIp: config.SIGN_UP_LIMIT_PER_IP,
    acceptInvitationPerIp: config.ACCEPT_INVITATION_LIMIT_PER_IP,
  },
});
await runServer({
  app,
  host: config.HOST,
  port: config.PORT,
  log,
  health,
  resources: [async () => housekeeping.stop(), async () => entitlements.stop(), () => invitationMail.stop(), () => relay.stop(), () => bus.close(), () => db.$disconnect(), async () => mailer.close()],
});
