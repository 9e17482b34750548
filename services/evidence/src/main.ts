import path from 'node:path';
import { createPrincipalSigner, createPrincipalVerifier } from '@sigil/kit/auth';
import { connectBus } from '@sigil/kit/bus';
import { baseServiceConfig, loadConfig, z } from '@sigil/kit/config';
import { migrate } from '@sigil/kit/db';
import { runServer } from '@sigil/kit/http';
import { createLogger } from '@sigil/kit/log';
import { createApp } from './app.ts';
import { createDb } from './db.ts';
import { startAppendListener } from './appended.ts';
import { startAuditConsumer } from './jobs/audit-consumer.ts';
import { startSealConsumer } from './seal/seal-job.ts';
import { createSealer } from './seal/sealer.ts';

const SERVICE = 'evidence';
const config = loadConfig(
  baseServiceConfig.extend({
    /** The envelopes service (the completed documents to seal, and where the sealed ones go). */
    ENVELOPES_URL: z.string().url(),
    /** Signs this service's own principal for the internal calls it makes. */
    INTERNAL_JWT_PRIVATE_KEY: z.string().min(1),
    /** The sealing identity: an RSA key (PKCS#8 PEM) and its certificate chain (PEM, signing certificate first). */
    SEAL_KEY_PEM: z.string().min(1),
    SEAL_CERT_PEM: z.string().min(1),
  }),
);
const log = createLogger(SERVICE, config.LOG_LEVEL);

await migrate(config.DATABASE_URL, path.resolve(import.meta.dirname, '../../../prisma/evidence/migrations'));
const db = createDb(config.DATABASE_URL);
const bus = await connectBus(config.NATS_URL, SERVICE);
const audit = await startAuditConsumer(bus, db, log, config.CONSUMER_PREFIX);
const appended = await startAppendListener(config.DATABASE_URL, log);
const sealer = await createSealer({ keyPem: config.SEAL_KEY_PEM, chainPem: config.SEAL_CERT_PEM });
const sealing = await startSealConsumer(bus, { db, sealer, envelopesUrl: config.ENVELOPES_URL, signPrincipal: await createPrincipalSigner(JSON.parse(config.INTERNAL_JWT_PRIVATE_KEY)), log }, config.CONSUMER_PREFIX);
const { app, health } = await createApp({ db, log, appended, verifyPrincipal: await createPrincipalVerifier(JSON.parse(config.INTERNAL_JWT_PUBLIC_KEY)), readiness: { nats: async () => void (await bus.nc.flush()) } });
await runServer({ app, host: config.HOST, port: config.PORT, log, health, resources: [() => sealing.stop(), () => audit.stop(), () => appended.stop(), () => bus.close(), () => db.$disconnect()] });
