import path from 'node:path';
import { createPrincipalVerifier } from '@sigil/kit/auth';
import { connectBus } from '@sigil/kit/bus';
import { loadConfig } from '@sigil/kit/config';
import { createExclusiveWork, migrate } from '@sigil/kit/db';
import { runServer } from '@sigil/kit/http';
import { createLogger } from '@sigil/kit/log';
import { entitlementsChangedSubject } from '@sigil/proto/internal-billing';
import { createApp } from './app.ts';
import { billingConfig, processorAddress } from './config.ts';
import { createDb } from './db.ts';
import { createStripeProcessor } from './processor/stripe-processor.ts';
import { startUsageConsumer } from './usage/consumer.ts';
import { startMeterReporter } from './usage/meter-reporter.ts';

const SERVICE = 'billing';
const config = loadConfig(billingConfig);
const log = createLogger(SERVICE, config.LOG_LEVEL);
const clock = () => new Date();

await migrate(config.DATABASE_URL, path.resolve(import.meta.dirname, '../../../prisma/billing/migrations'));
const db = createDb(config.DATABASE_URL);
const bus = await connectBus(config.NATS_URL, SERVICE, { eventConsumersStartAt: config.EVENT_CONSUMERS_START_AT });
const processor = createStripeProcessor({ secretKey: config.PROCESSOR_SECRET_KEY, webhookSecret: config.PROCESSOR_WEBHOOK_SECRET, ...processorAddress(config.PROCESSOR_API_URL) });
const usage = await startUsageConsumer(bus, { db, log, prefix: config.CONSUMER_PREFIX, concurrency: config.USAGE_CONCURRENCY });
const exclusive = await createExclusiveWork(config.DATABASE_URL, log);
const meters = startMeterReporter({ db, processor, clock, log }, config.METER_REPORT_INTERVAL_MS, exclusive);
const { app, health } = await createApp({
  db,
  log,
  verifyPrincipal: await createPrincipalVerifier(JSON.parse(config.INTERNAL_JWT_PUBLIC_KEY)),
  processor,
  dashboardUrl: config.DASHBOARD_URL,
  clock,
  notifyPlanChanged: (organizationId) => bus.notify(entitlementsChangedSubject(organizationId), { organizationId }),
  readiness: { nats: async () => void (await bus.nc.flush()) },
});
await runServer({ app, host: config.HOST, port: config.PORT, log, health, resources: [() => meters.stop(), () => exclusive.close(), () => usage.stop(), () => bus.close(), () => db.$disconnect()] });
