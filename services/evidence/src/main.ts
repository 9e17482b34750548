import path from 'node:path';
import { createPrincipalVerifier } from '@sigil/kit/auth';
import { connectBus } from '@sigil/kit/bus';
import { baseServiceConfig, loadConfig } from '@sigil/kit/config';
import { migrate } from '@sigil/kit/db';
import { runServer } from '@sigil/kit/http';
import { createLogger } from '@sigil/kit/log';
import { createApp } from './app.ts';
import { createDb } from './db.ts';
import { startAppendListener } from './appended.ts';
import { startAuditConsumer } from './jobs/audit-consumer.ts';

const SERVICE = 'evidence';
const config = loadConfig(baseServiceConfig);
const log = createLogger(SERVICE, config.LOG_LEVEL);

await migrate(config.DATABASE_URL, path.resolve(import.meta.dirname, '../../../prisma/evidence/migrations'));
const db = createDb(config.DATABASE_URL);
const bus = await connectBus(config.NATS_URL, SERVICE);
const audit = await startAuditConsumer(bus, db, log, config.CONSUMER_PREFIX);
const appended = await startAppendListener(config.DATABASE_URL, log);
const { app, health } = await createApp({ db, log, appended, verifyPrincipal: await createPrincipalVerifier(JSON.parse(config.INTERNAL_JWT_PUBLIC_KEY)), readiness: { nats: async () => void (await bus.nc.flush()) } });
await runServer({ app, host: config.HOST, port: config.PORT, log, health, resources: [() => audit.stop(), () => appended.stop(), () => bus.close(), () => db.$disconnect()] });
