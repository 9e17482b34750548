import path from 'node:path';
import { loadConfig } from '@sigil/kit/config';
import { connectBus, startOutboxRelay } from '@sigil/kit/bus';
import { createLogger } from '@sigil/kit/log';
import { createPrincipalVerifier } from '@sigil/kit/auth';
import { migrate } from '@sigil/kit/db';
import { runServer } from '@sigil/kit/http';
import { createApp } from './app.ts';
import { createDb } from './db.ts';
import { startTemplateUsageConsumer } from './jobs/template-usage.ts';
import { templatesConfig } from './config.ts';
import { createOfficeConverter } from './files/office-convert.ts';
import { createS3FileStore, fileStoreOptions } from './files/storage.ts';
import { createBodyPrinter } from './versions/print-body.ts';

const SERVICE = 'templates';
const config = loadConfig(templatesConfig);
const log = createLogger(SERVICE, config.LOG_LEVEL);

await migrate(config.DATABASE_URL, path.resolve(import.meta.dirname, '../../../prisma/templates/migrations'));
const db = createDb(config.DATABASE_URL);
const bus = await connectBus(config.NATS_URL, SERVICE, { eventConsumersStartAt: config.EVENT_CONSUMERS_START_AT });
const relay = await startOutboxRelay({ databaseUrl: config.DATABASE_URL, bus, log });
const usage = await startTemplateUsageConsumer(bus, db, log, config.CONSUMER_PREFIX);
const store = await createS3FileStore(fileStoreOptions(config));
const converter = createOfficeConverter({ workers: config.CONVERSION_WORKERS, timeoutMs: config.CONVERSION_TIMEOUT_MS });
const printer = createBodyPrinter({ executablePath: config.CHROMIUM_PATH });
const { app, health } = await createApp({
  db,
  log,
  verifyPrincipal: await createPrincipalVerifier(JSON.parse(config.INTERNAL_JWT_PUBLIC_KEY)),
  readiness: { nats: async () => void (await bus.nc.flush()) },
  files: { store, converter, printer, maxBytes: config.TEMPLATE_FILE_MAX_BYTES, maxPages: config.TEMPLATE_FILE_MAX_PAGES },
});
await runServer({
  app,
  host: config.HOST,
  port: config.PORT,
  log,
  health,
  resources: [() => usage.stop(), () => relay.stop(), () => bus.close(), () => db.$disconnect(), () => converter.close(), () => printer.close()],
});
