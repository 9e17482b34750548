import path from 'node:path';
import pg from 'pg';
import { createPrincipalSigner, createPrincipalVerifier, createServiceClient } from '@sigil/kit/auth';
import { connectBus } from '@sigil/kit/bus';
import { loadConfig } from '@sigil/kit/config';
import { migrate } from '@sigil/kit/db';
import { runServer } from '@sigil/kit/http';
import { createLogger } from '@sigil/kit/log';
import { createApp } from './app.ts';
import { evidenceConfig } from './config.ts';
import { createDb } from './db.ts';
import { startAppendListener } from './appended.ts';
import { startAuditConsumer } from './jobs/audit-consumer.ts';
import { startSealConsumer } from './seal/seal-job.ts';
import { createSealer, type SealingKey } from './seal/sealer.ts';
import { startAnchorer } from './log/anchors.ts';
import { parseSignerKey } from '@sigil/tlog/note';

const SERVICE = 'evidence';
const config = loadConfig(evidenceConfig);
const log = createLogger(SERVICE, config.LOG_LEVEL);
const clock = () => new Date();

await migrate(config.DATABASE_URL, path.resolve(import.meta.dirname, '../../../prisma/evidence/migrations'));
const db = createDb(config.DATABASE_URL);
const bus = await connectBus(config.NATS_URL, SERVICE, { eventConsumersStartAt: config.EVENT_CONSUMERS_START_AT });
const audit = await startAuditConsumer(bus, db, log, config.CONSUMER_PREFIX);
const appended = await startAppendListener(config.DATABASE_URL, log);
const sealingKey: SealingKey = config.SEAL_P12_BASE64
  ? { p12: Buffer.from(config.SEAL_P12_BASE64, 'base64'), password: config.SEAL_P12_PASSWORD }
  : { keyPem: config.SEAL_KEY_PEM ?? '', chainPem: config.SEAL_CERT_PEM ?? '' };
const sealer = await createSealer({ ...sealingKey, timestampUrl: config.TSA_URL });
const envelopes = createServiceClient({ target: 'envelopes', actorId: 'evidence', baseUrl: config.ENVELOPES_URL, signPrincipal: await createPrincipalSigner(JSON.parse(config.INTERNAL_JWT_PRIVATE_KEY)) });
const sealing = await startSealConsumer(bus, { db, sealer, envelopes, publicUrl: config.PUBLIC_URL, clock, log }, { prefix: config.CONSUMER_PREFIX });
const host = new URL(config.PUBLIC_URL).hostname;
const anchorer = await startAnchorer({ db, signer: parseSignerKey(config.ANCHOR_SIGNING_KEY), origin: (mode) => `${host}/sigil/log/${mode}`, intervalMs: config.ANCHOR_INTERVAL_MS, clock, log });
const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 4 });
// An idle connection the server closes (Postgres restarting) is an error event: without a listener it ends the process.
pool.on('error', (error) => log.warn({ err: error }, 'idle database connection lost'));
const { app, health } = await createApp({
  db,
  pool,
  log,
  appended,
  verifyPrincipal: await createPrincipalVerifier(JSON.parse(config.INTERNAL_JWT_PUBLIC_KEY)),
  rateLimits: { verifyPerMinute: config.RATE_LIMIT_VERIFY_PER_MINUTE, publicPerMinute: config.RATE_LIMIT_PUBLIC_PER_MINUTE },
  readiness: { nats: async () => void (await bus.nc.flush()) },
});
await runServer({ app, host: config.HOST, port: config.PORT, log, health, resources: [() => anchorer.stop(), () => sealing.stop(), () => audit.stop(), () => appended.stop(), () => bus.close(), () => db.$disconnect(), () => pool.end()] });
