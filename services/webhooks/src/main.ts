import path from 'node:path';
import { createPrincipalVerifier } from '@sigil/kit/auth';
import { connectBus } from '@sigil/kit/bus';
import { loadConfig } from '@sigil/kit/config';
import { parseSecretsKey } from '@sigil/kit/crypto';
import { listenToChannel, migrate } from '@sigil/kit/db';
import { runServer, systemResolver, type UrlPolicy } from '@sigil/kit/http';
import { createLogger } from '@sigil/kit/log';
import { createApp } from './app.ts';
import { allowedOrigins, webhooksConfig } from './config.ts';
import { createDb } from './db.ts';
import { startDeliveryWorker } from './worker.ts';
import { DUE_CHANNEL, startFanOut } from './fanout.ts';
import { createSecretBox } from './secrets.ts';
import { createSender } from './sender.ts';

const SERVICE = 'webhooks';
const config = loadConfig(webhooksConfig);
const log = createLogger(SERVICE, config.LOG_LEVEL);

await migrate(config.DATABASE_URL, path.resolve(import.meta.dirname, '../../../prisma/webhooks/migrations'));
const db = createDb(config.DATABASE_URL);
const clock = () => new Date();
const secrets = createSecretBox(parseSecretsKey(config.WEBHOOK_SECRETS_KEY));
const policy: UrlPolicy = { allowedOrigins: allowedOrigins(config.WEBHOOK_ALLOWED_ORIGINS), resolve: systemResolver };
if (policy.allowedOrigins.length) log.warn({ origins: policy.allowedOrigins }, 'webhook endpoints may also use these origins (development allow-list)');
const sender = createSender();
const worker = startDeliveryWorker({ db, sender, policy, secrets, clock, log, timeoutMs: config.WEBHOOK_TIMEOUT_MS }, { concurrency: config.WEBHOOK_CONCURRENCY, perEndpoint: config.WEBHOOK_PER_ENDPOINT_CONCURRENCY, leaseMs: Math.max(5_000, 3 * config.WEBHOOK_TIMEOUT_MS) });
const due = await listenToChannel(config.DATABASE_URL, DUE_CHANNEL, () => void worker.wake(), log);
const bus = await connectBus(config.NATS_URL, SERVICE, { eventConsumersStartAt: config.EVENT_CONSUMERS_START_AT });
const fanout = await startFanOut(bus, { db, log, clock, prefix: config.CONSUMER_PREFIX });
const { app, health } = await createApp({
  db,
  log,
  secrets,
  policy,
  clock,
  wake: () => void worker.wake(),
  verifyPrincipal: await createPrincipalVerifier(JSON.parse(config.INTERNAL_JWT_PUBLIC_KEY)),
  readiness: { nats: async () => void (await bus.nc.flush()) },
});
await runServer({ app, host: config.HOST, port: config.PORT, log, health, resources: [() => fanout.stop(), () => due.stop(), () => worker.stop(), () => sender.close(), () => bus.close(), () => db.$disconnect()] });
