import path from 'node:path';
import pg from 'pg';
import { createPrincipalSigner, createPrincipalVerifier } from '@sigil/kit/auth';
import { connectBus, startOutboxRelay } from '@sigil/kit/bus';
import { loadConfig } from '@sigil/kit/config';
import { listenToChannel, migrate } from '@sigil/kit/db';
import { runServer } from '@sigil/kit/http';
import { createLogger } from '@sigil/kit/log';
import { accountsBrandingSource, createBrandingCache } from '@sigil/kit/branding';
import { createS3FileStore, fileStoreOptions } from '@strata/stream/file-store';
import { createHttpSmsProvider, createInboxSmsProvider, createMailer, type SmsProvider } from '@sigil/mail';
import { createApp } from './app.ts';
import { signingConfig } from './config.ts';
import { createDb } from './db.ts';
import { createEnvelopesClient } from './envelopes-client.ts';
import { LINK_CODES_DUE } from './link-code-mail.ts';
import { createLinksClient } from './links-client.ts';
import { createViewersClient } from './viewers-client.ts';

const SERVICE = 'signing';
const config = loadConfig(signingConfig);
const log = createLogger(SERVICE, config.LOG_LEVEL);

await migrate(config.DATABASE_URL, path.resolve(import.meta.dirname, '../../../prisma/signing/migrations'));
const db = createDb(config.DATABASE_URL);
// Codes and attachments are events of the envelope's audit trail: they leave through the outbox.
const bus = await connectBus(config.NATS_URL, SERVICE, { eventConsumersStartAt: config.EVENT_CONSUMERS_START_AT });
const relay = await startOutboxRelay({ databaseUrl: config.DATABASE_URL, bus, log });
const signPrincipal = await createPrincipalSigner(JSON.parse(config.INTERNAL_JWT_PRIVATE_KEY));
const envelopes = createEnvelopesClient({ baseUrl: config.ENVELOPES_URL, signPrincipal });
const branding = await createBrandingCache({ source: accountsBrandingSource({ baseUrl: config.ACCOUNTS_URL, signPrincipal, actorId: SERVICE }), bus, log });
// The signing links' caps count in this database (`rate_limits`), shared by every replica.
const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 4 });
// An idle connection the server closes (Postgres restarting) is an error event: without a listener it ends the process.
pool.on('error', (error) => log.warn({ err: error }, 'idle database connection lost'));
const store = await createS3FileStore(fileStoreOptions(config));
const mailer = createMailer({ url: config.SMTP_URL, from: config.MAIL_FROM });
const sms: SmsProvider =
  config.SMS_PROVIDER === 'http'
    ? createHttpSmsProvider({ baseUrl: required(config.SMS_API_URL, 'SMS_API_URL'), accountId: required(config.SMS_ACCOUNT_ID, 'SMS_ACCOUNT_ID'), authToken: required(config.SMS_AUTH_TOKEN, 'SMS_AUTH_TOKEN'), from: required(config.SMS_FROM, 'SMS_FROM') })
    : createInboxSmsProvider(mailer);
const { app, health, linkCodes } = await createApp({
  mailer,
  sms,
  store,
  attachmentMaxBytes: config.ATTACHMENT_MAX_BYTES,
  db,
  log,
  verifyPrincipal: await createPrincipalVerifier(JSON.parse(config.INTERNAL_JWT_PUBLIC_KEY)),
  envelopes,
  links: { client: createLinksClient({ baseUrl: config.ENVELOPES_URL, signPrincipal }), pool },
  viewers: { client: createViewersClient({ baseUrl: config.ENVELOPES_URL, signPrincipal }), feed: bus, pool },
  accessTokenTtlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
  branding,
});
// Visitors' codes: mailed on a notification from any replica, and every few seconds for what a lost one left due.
const codesDue = await listenToChannel(config.DATABASE_URL, LINK_CODES_DUE, () => linkCodes?.wake(), log);
const codesSweep = setInterval(() => linkCodes?.wake(), 5_000);
codesSweep.unref();
await runServer({
  app,
  host: config.HOST,
  port: config.PORT,
  log,
  health,
  resources: [async () => clearInterval(codesSweep), async () => branding.stop(), () => codesDue.stop(), async () => linkCodes?.idle(), () => relay.stop(), () => bus.close(), () => db.$disconnect(), () => pool.end(), async () => mailer.close()],
});

function required(value: string | undefined, name: string): string {
  if (!value) throw new Error(`${name} is required when SMS_PROVIDER is http`);
  return value;
}
