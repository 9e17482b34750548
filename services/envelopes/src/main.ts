import path from 'node:path';
import { createPrincipalSigner, createPrincipalVerifier } from '@sigil/kit/auth';
import { connectBus, startOutboxRelay } from '@sigil/kit/bus';
import { loadConfig } from '@sigil/kit/config';
import { migrate } from '@sigil/kit/db';
import { runServer } from '@sigil/kit/http';
import { createLogger } from '@sigil/kit/log';
import { billingEntitlementsSource, createEntitlementsCache } from '@sigil/kit/entitlements';
import { accountsBrandingSource, createBrandingCache } from '@sigil/kit/branding';
import { createS3FileStore, fileStoreOptions } from '@strata/stream/file-store';
import { createMailer } from '@sigil/mail';
import { startDirectoryConsumer } from './mail/directory.ts';
import { startMailConsumer } from './mail/notify.ts';
import { remindDue } from './mail/reminders.ts';
import { createApp } from './app.ts';
import { envelopesConfig } from './config.ts';
import { createDb } from './db.ts';
import { startScheduler } from './jobs/expiry.ts';
import { startRenderConsumer } from './jobs/render.ts';
import { createTemplatesClient } from './templates-client.ts';

const SERVICE = 'envelopes';
const config = loadConfig(envelopesConfig);
const log = createLogger(SERVICE, config.LOG_LEVEL);
const clock = () => new Date();

await migrate(config.DATABASE_URL, path.resolve(import.meta.dirname, '../../../prisma/envelopes/migrations'));
const db = createDb(config.DATABASE_URL);
const bus = await connectBus(config.NATS_URL, SERVICE, { eventConsumersStartAt: config.EVENT_CONSUMERS_START_AT });
const relay = await startOutboxRelay({ databaseUrl: config.DATABASE_URL, bus, log });
const store = await createS3FileStore(fileStoreOptions(config));
const signPrincipal = await createPrincipalSigner(JSON.parse(config.INTERNAL_JWT_PRIVATE_KEY));
const templates = createTemplatesClient({ baseUrl: config.TEMPLATES_URL, signPrincipal });
const entitlements = await createEntitlementsCache({ source: billingEntitlementsSource({ baseUrl: config.BILLING_URL, signPrincipal, actorId: SERVICE }), bus, log });
const renders = await startRenderConsumer(bus, { db, store, templates, clock, log }, { cell: config.CONSUMER_PREFIX, concurrency: config.RENDER_CONCURRENCY });
const branding = await createBrandingCache({ source: accountsBrandingSource({ baseUrl: config.ACCOUNTS_URL, signPrincipal, actorId: SERVICE }), bus, log });
const mail = { db, clock, store, mailer: createMailer({ url: config.SMTP_URL, from: config.MAIL_FROM }), publicUrl: config.PUBLIC_URL, branding, log };
const directory = await startDirectoryConsumer(bus, db, log, config.CONSUMER_PREFIX);
const mailing = await startMailConsumer(bus, { ...mail, log, prefix: config.CONSUMER_PREFIX });
const scheduler = startScheduler({ db, clock, intervalMs: config.SCHEDULER_INTERVAL_MS, log, remind: (now) => remindDue(mail, now) });
const { app, health } = await createApp({
  db,
  log,
  verifyPrincipal: await createPrincipalVerifier(JSON.parse(config.INTERNAL_JWT_PUBLIC_KEY)),
  templates,
  entitlements,
  store,
  clock,
  defaultExpiryDays: config.ENVELOPE_DEFAULT_EXPIRY_DAYS,
  cell: config.CONSUMER_PREFIX,
  sessionTtlSeconds: config.SESSION_TTL_SECONDS,
  publicUrl: config.PUBLIC_URL,
  mail,
  readiness: { nats: async () => void (await bus.nc.flush()) },
});
await runServer({
  app,
  host: config.HOST,
  port: config.PORT,
  log,
  health,
  resources: [async () => entitlements.stop(), async () => branding.stop(), () => scheduler.stop(), () => mailing.stop(), () => directory.stop(), () => renders.stop(), () => relay.stop(), () => bus.close(), () => db.$disconnect(), async () => mail.mailer.close()],
});
