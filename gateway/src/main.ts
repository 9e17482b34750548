import { readFileSync } from 'node:fs';
import type { JWK } from 'jose';
import { connectBus, createLogger, createPrincipalSigner, loadConfig, runServer } from '@sigil/kit';
import { createGatewayApp } from './app.ts';
import { createAuthenticator } from './authenticator.ts';
import { gatewayConfigSchema, type GatewayConfig } from './config.ts';

let config: GatewayConfig;
try {
  config = loadConfig(gatewayConfigSchema) as GatewayConfig;
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
const log = createLogger('gateway', config.LOG_LEVEL);

const signPrincipal = await createPrincipalSigner(config.INTERNAL_JWT_PRIVATE_KEY as JWK);
const bus = await connectBus(config.NATS_URL, 'gateway');
const authenticator = createAuthenticator({ accountsUrl: config.SERVICE_URLS.accounts, signPrincipal, log });
const revocations = await authenticator.subscribeRevocations(bus.nc);
const gateway = await createGatewayApp({
  serviceUrls: config.SERVICE_URLS,
  signPrincipal,
  log,
  authenticator,
  supergraphSdl: readFileSync(new URL('../supergraph.graphql', import.meta.url), 'utf8'),
  trustProxy: config.TRUST_PROXY,
});
await runServer({
  app: gateway.app,
  host: config.HOST,
  port: config.PORT,
  log,
  health: gateway.health,
  resources: [() => gateway.close(), async () => revocations.unsubscribe(), () => bus.close()],
});
