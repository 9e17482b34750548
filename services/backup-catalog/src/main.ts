import path from 'node:path';
import { connectBus, startOutboxRelay } from '@sigil/kit/bus';
import { createLogger } from '@sigil/kit/log';
import { createStrataPrincipalVerifier } from '@sigil/kit/auth';
import { loadConfig } from '@sigil/kit/config';
import { migrate } from '@sigil/kit/db';
import { parseSecretsKey } from '@sigil/kit/crypto';
import { runServer } from '@sigil/kit/http';
import { createApp } from './app.ts';
import { catalogConfig } from './config.ts';
import { startCatalog } from './catalog.ts';

const SERVICE = 'backup-catalog';
const config = loadConfig(catalogConfig);
const log = createLogger(SERVICE, config.LOG_LEVEL);

await migrate(config.DATABASE_URL, path.resolve(import.meta.dirname, '../../../prisma/backup-catalog/migrations'));
const bus = await connectBus(config.NATS_URL, SERVICE, { eventConsumersStartAt: config.EVENT_CONSUMERS_START_AT });
const relay = await startOutboxRelay({ databaseUrl: config.DATABASE_URL, bus, log });
const catalog = await startCatalog({ config, bus, log, secretsKey: parseSecretsKey(config.STRATA_SECRETS_KEY) });
const { app, health } = await createApp({
  ...catalog.deps,
  log,
  verifyPrincipal: await createStrataPrincipalVerifier(JSON.parse(config.INTERNAL_JWT_PUBLIC_KEY)),
  externalUrl: config.STRATA_EXTERNAL_URL,
  readiness: { nats: async () => void (await bus.nc.flush()) },
});
await runServer({
  app,
  host: config.HOST,
  port: config.PORT,
  log,
  health,
  resources: [() => catalog.stop(), () => relay.stop(), () => bus.close()],
});
