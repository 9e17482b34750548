import express from 'express';
import { connectBus } from '@sigil/kit/bus';
import { createLogger } from '@sigil/kit/log';
import { loadConfig } from '@sigil/kit/config';
import { mountHealth, runServer } from '@sigil/kit/http';
import { parseSecretsKey } from '@sigil/kit/crypto';
import { moverConfig } from './config.ts';
import { startWorker } from './worker.ts';

const SERVICE = 'mover';
const config = loadConfig(moverConfig);
const log = createLogger(SERVICE, config.LOG_LEVEL);
const bus = await connectBus(config.NATS_URL, SERVICE);
const worker = await startWorker({ bus, log, secretsKey: parseSecretsKey(config.STRATA_SECRETS_KEY), concurrency: config.MOVER_CONCURRENCY, streams: config.MOVER_STREAMS, consumerPrefix: config.CONSUMER_PREFIX });
const app = express();
const health = mountHealth(app, { nats: () => bus.ping() });
app.get('/status', (_req, res) => res.json({ activeJobs: worker.active() }));
await runServer({ app, host: config.HOST, port: config.PORT, log, health, resources: [() => worker.stop(), () => bus.close()] });
