import { DEMO_DATABASE, ensureDemoDatabases } from './demo.ts';
import { stopSandboxServers } from './sandbox-servers.ts';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ensureDatabase } from '@sigil/kit/db';
import { generateInternalKeyPair, type InternalKeyPair } from '@sigil/kit/auth';
import { generateSealingIdentity, type SealingIdentity } from '@sigil/kit/sealing-identity';
import { generateNoteKey } from '@sigil/tlog/note';
import { startLocalTsa, type LocalTsa } from './tsa.ts';
import type { LocalProcessor } from '@sigil/local-processor';
import type { LocalIdp, LocalIdpKeys } from '@sigil/local-idp';
import { missingTools } from './tools.ts';
import { freeListenPort, pickPort } from './net.ts';
import { ensureInfra, type Infra } from './infra.ts';
import { serviceNodeFlags } from './node-flags.ts';
import { createSupervisor } from './supervisor.ts';
import { gatewayServiceUrls, replicaCountOf, replicaName } from './replicas.ts';

export { serviceNodeFlags };

/** The services this stack runs, in start order, and the gateway in front of them. */
/** Webhook receivers on this machine are allowed on a local stack (production allows public https only). */
export const LOCAL_WEBHOOK_ORIGINS = ['http://127.0.0.1:*', 'http://localhost:*'];
/**
 * Identity providers on this machine too (SAML metadata, OpenID discovery): the stack's own local IdP, a test's, or a
 * Keycloak a developer runs (production allows public https only).
 */
export const LOCAL_SSO_ORIGINS = ['http://127.0.0.1:*', 'http://localhost:*'];

export const STACK_SERVICES = ['billing', 'accounts', 'templates', 'backup-catalog', 'mover', 'sandbox', 'envelopes', 'signing', 'evidence', 'webhooks'] as const;
export type StackService = (typeof STACK_SERVICES)[number];
/** Services with no public path (the gateway does not route to them). */
const WORKERS: readonly StackService[] = ['mover'];
/** Services without a database of their own. */
const STATELESS: readonly StackService[] = ['mover'];

const databaseName = (namespace: string, service: StackService) =>
  `${namespace}${service === 'backup-catalog' || service === 'sandbox' ? 'strata' : 'sigil'}_${service.replace(/-/g, '_')}`.toLowerCase();

export interface StackOptions {
  stateDir: string;
  env?: NodeJS.ProcessEnv;
  /** Prefix of database and durable-consumer names, so test stacks share servers without sharing state. */
  namespace?: string;
  gatewayPort?: number;
  log?: (line: string) => void;
  logLevel?: string;
  /**
   * Processes per service (the mover too); default `env.STACK_REPLICAS`, else 1. The gateway spreads requests over them;
   * the second replica of `envelopes` is the process `envelopes#2`.
   */
  replicas?: number;
}

export interface SeedResult {
  organizationId: string;
  ownerEmail: string;
  ownerPassword: string;
  testApiKey: string;
}

export interface Stack {
  gatewayUrl: string;
  /** The first replica's address of each service. */
  serviceUrls: Record<StackService, string>;
  /** Every replica's address of each service, the first one first. */
  replicaUrls: Record<StackService, string[]>;
  replicas: number;
  infra: Infra;
  seed: SeedResult;
  /** Whether the stack keeps its demo database `shop` in its own Postgres and MariaDB (not in servers the environment named). */
  demo: { postgres: boolean; mysql: boolean };
  /** Live view: `name` is the service (`envelopes`) for replica 1 and `envelopes#2` for the second; pid updates after a restart. */
  processes: Array<{ name: string; pid: number }>;
  /** SIGKILLs the named process and resolves once the stack has restarted it and it is ready (its /readyz answers 200). */
  killAndRestart(name: string): Promise<{ oldPid: number; newPid: number }>;
  /** The local identity provider an organization's SSO connection can use (SAML metadata URL, OpenID issuer and client). */
  localIdp: LocalIdpFacts;
  stop(): Promise<void>;
}

export interface LocalIdpFacts {
  url: string;
  samlMetadataUrl: string;
  oidcIssuer: string;
  oidcClientId: string;
  oidcClientSecret: string;
}

/** Provisions infrastructure, starts every service and the gateway as child processes, and seeds a first organization. */
export async function startStack(options: StackOptions): Promise<Stack> {
  const log = options.log ?? (() => undefined);
  const namespace = options.namespace ?? '';
  await mkdir(path.join(options.stateDir, 'logs'), { recursive: true });
  for (const problem of missingTools()) log(`warning: ${problem}`);
  const replicas = replicaCountOf(options.replicas, options.env ?? process.env);
  const infra = await ensureInfra({ stateDir: options.stateDir, env: options.env ?? process.env, log });
  // Services, their replicas and the gateway run supervised: one that dies is started again on its port.
  const supervisor = createSupervisor({ stateDir: options.stateDir, log });
  let tsa: LocalTsa | undefined;
  let processor: LocalProcessor | undefined;
  let idp: LocalIdp | undefined;
  const stop = async () => {
    await supervisor.stopAll();
    await stopSandboxServers(path.join(options.stateDir, 'sandboxes'));
    await tsa?.stop();
    await processor?.stop();
    await idp?.close();
    await infra.stop();
  };
  try {
    const keys = await internalKeys(options.stateDir);
    const strataSecretsKey = await persistentSecret(options.stateDir, 'strata-secrets.key', async () => randomBytes(32).toString('base64'));
    const devIssuerKey = await persistentSecret(options.stateDir, 'strata-dev-issuer.json', async () => JSON.stringify((await generateInternalKeyPair()).privateJwk));
    const common = {
      NATS_URL: infra.nats.url,
      INTERNAL_JWT_PUBLIC_KEY: JSON.stringify(keys.publicJwk),
      CONSUMER_PREFIX: namespace,
      // A namespaced stack shares the broker with others: its consumers start at the events stream's end, not in the
      // history of the stacks before it.
      EVENT_CONSUMERS_START_AT: namespace ? 'new' : 'all',
      LOG_LEVEL: options.logLevel ?? 'info',
      HOST: '127.0.0.1',
    };
    const readiness = new Map<string, Promise<string>>();
    /** A replica's address once it is ready: replica n of a service calls replica n of those it depends on. */
    const urlOf = (service: StackService, replica = 1): Promise<string> => {
      const name = replicaName(service, replica);
      let url = readiness.get(name);
      if (!url) readiness.set(name, (url = supervisor.waitReady(name)));
      return url;
    };
    // Known before the services start: envelopes and accounts put it in the links they e-mail.
    const gatewayPort = options.gatewayPort ?? (await freeListenPort());
    const publicUrl = `http://127.0.0.1:${gatewayPort}`;
    const smtpUrl = `smtp://${infra.smtp.host}:${infra.smtp.port}`;
    // SSO without a real identity provider: a local SAML IdP and OpenID provider, its keys, client secret and port kept
    // so a connection made against it survives a restart.
    idp = await startStackIdp(options.stateDir, publicUrl, log);
    const localIdp = { url: idp.url, samlMetadataUrl: idp.saml.metadataUrl, oidcIssuer: idp.oidc.issuer, oidcClientId: idp.oidc.clientId, oidcClientSecret: idp.oidc.clientSecret };
    // Without a fixed gateway port the catalog reports the address its callers used.
    const strata = {
      STRATA_SECRETS_KEY: strataSecretsKey,
      ...(options.gatewayPort ? { STRATA_EXTERNAL_URL: `http://127.0.0.1:${options.gatewayPort}` } : {}),
    };
    // One wave per replica, each after the one before is ready: twenty processes booting at once on a small machine
    // starved each other past their transactions' timeouts.
    for (let replica = 1; replica <= replicas; replica += 1) for (const service of STACK_SERVICES) {
      if (replica > 1 && service === STACK_SERVICES[0]) await Promise.all(STACK_SERVICES.map((one) => urlOf(one, replica - 1)));
      // Port 0: each process binds a port of its own and writes its address to LISTEN_URL_FILE.
      const env: Record<string, string> = { ...common, PORT: '0' };
      if (!STATELESS.includes(service)) env.DATABASE_URL = await ensureDatabase(infra.postgres.adminUrl, databaseName(namespace, service));
      if (service === 'backup-catalog' || service === 'mover' || service === 'sandbox') Object.assign(env, strata);
      // Sandboxes: real servers under the state directory; the catalog plans and records their restores.
      if (service === 'sandbox') {
        Object.assign(env, { BACKUP_CATALOG_URL: await urlOf('backup-catalog', replica), INTERNAL_JWT_PRIVATE_KEY: JSON.stringify(keys.privateJwk), SANDBOX_DIR: path.join(options.stateDir, 'sandboxes') });
      }
      // Template files, envelope documents, signers' attachments and organization logos live in the stack's S3.
      if (service === 'templates' || service === 'envelopes' || service === 'signing' || service === 'accounts') {
        Object.assign(env, { S3_ENDPOINT: infra.s3.endpoint, S3_REGION: infra.s3.region, S3_ACCESS_KEY: infra.s3.accessKey, S3_SECRET_KEY: infra.s3.secretKey });
      }
      // Accounts e-mails invitations, linking to the dashboard's accept page at the gateway's address.
      // It reads plan entitlements (SSO, SCIM, branding) from billing, which starts before it.
      if (service === 'accounts') {
        Object.assign(env, { PUBLIC_URL: publicUrl, SMTP_URL: smtpUrl, BILLING_URL: await urlOf('billing', replica), INTERNAL_JWT_PRIVATE_KEY: JSON.stringify(keys.privateJwk) });
        // Accounts may reach the local identity provider below (and others on loopback).
        env.SSO_ALLOWED_ORIGINS = [(options.env ?? process.env).SSO_ALLOWED_ORIGINS, ...LOCAL_SSO_ORIGINS].filter(Boolean).join(',');
      }
      // Envelopes calls the templates service's internal endpoints as itself: it waits for templates' address.
      if (service === 'envelopes') {
        Object.assign(env, { TEMPLATES_URL: await urlOf('templates', replica), INTERNAL_JWT_PRIVATE_KEY: JSON.stringify(keys.privateJwk) });
        Object.assign(env, { PUBLIC_URL: publicUrl, SMTP_URL: smtpUrl });
      }
      // Evidence seals with the stack's own sealing identity (a self-signed CA made at first start and kept).
      if (service === 'evidence') {
        const identity = JSON.parse(await persistentSecret(options.stateDir, 'sealing-identity.json', async () => JSON.stringify(await generateSealingIdentity()))) as SealingIdentity;
        Object.assign(env, { ENVELOPES_URL: await urlOf('envelopes', replica), INTERNAL_JWT_PRIVATE_KEY: JSON.stringify(keys.privateJwk), SEAL_KEY_PEM: identity.keyPem, SEAL_CERT_PEM: identity.chainPem });
        // The transparency log's anchor key, made at first start and kept (its name dates it: a rotation is a new name).
        const anchorKey = await persistentSecret(options.stateDir, 'anchor-key.txt', async () => generateNoteKey(`127.0.0.1/sigil/anchors/${new Date().toISOString().slice(0, 10)}`).signerKey);
        // Seals carry RFC 3161 timestamps (PAdES B-T) from a small local authority with an identity of its own.
        const tsaIdentity = JSON.parse(await persistentSecret(options.stateDir, 'tsa-identity.json', async () => JSON.stringify(await generateSealingIdentity('Sigil local', { purpose: 'timestamping' })))) as SealingIdentity;
        tsa ??= await startLocalTsa({ identity: tsaIdentity });
        Object.assign(env, { TSA_URL: tsa.url, ANCHOR_SIGNING_KEY: anchorKey.trim(), ANCHOR_INTERVAL_MS: (options.env ?? process.env).STACK_ANCHOR_INTERVAL_MS ?? '5000', PUBLIC_URL: publicUrl });
      }
      // Webhooks: secrets sealed with a key of the stack's own; local receivers allowed (the banner says so).
      if (service === 'webhooks') {
        const secretsKey = await persistentSecret(options.stateDir, 'webhook-secrets.key', async () => randomBytes(32).toString('base64'));
        Object.assign(env, { WEBHOOK_SECRETS_KEY: secretsKey, WEBHOOK_ALLOWED_ORIGINS: LOCAL_WEBHOOK_ORIGINS.join(',') });
        // A receiver's time to answer (and with it the delivery lease): tests of a replica killed mid-delivery shorten it.
        const timeoutMs = (options.env ?? process.env).STACK_WEBHOOK_TIMEOUT_MS;
        if (timeoutMs) env.WEBHOOK_TIMEOUT_MS = timeoutMs;
      }
      // Billing talks to the local payment processor (the real processor's API, its checkout and portal pages), which
      // sends its webhooks through the gateway like the real one would.
      if (service === 'billing') {
        const secretKey = await persistentSecret(options.stateDir, 'processor-secret-key.txt', async () => `sk_test_${randomBytes(24).toString('hex')}`);
        const webhookSecret = await persistentSecret(options.stateDir, 'processor-webhook-secret.txt', async () => `whsec_${randomBytes(24).toString('base64url')}`);
        const { startLocalProcessor } = await import('@sigil/local-processor');
        processor ??= await startLocalProcessor({ host: '127.0.0.1', port: 0, secretKey, webhookSecret, webhookUrl: `${publicUrl}/v1/billing/webhooks/processor` });
        Object.assign(env, { PROCESSOR_SECRET_KEY: secretKey, PROCESSOR_WEBHOOK_SECRET: webhookSecret, PROCESSOR_API_URL: processor.url, DASHBOARD_URL: `${publicUrl}/app` });
        // Usage beyond the included envelopes reaches the local processor within seconds, not the production minute.
        env.METER_REPORT_INTERVAL_MS = (options.env ?? process.env).STACK_METER_REPORT_INTERVAL_MS ?? '5000';
      }
      // Envelopes reads the organization's plan entitlements from billing before a send.
      if (service === 'envelopes') {
        env.BILLING_URL = await urlOf('billing', replica);
      }
      // Envelopes and signing read the organization's e-mail branding (and logo) from accounts, which starts before them.
      if (service === 'envelopes' || service === 'signing') {
        env.ACCOUNTS_URL = await urlOf('accounts', replica);
      }
      // Signing calls the envelopes service's internal endpoints the same way.
      if (service === 'signing') {
        Object.assign(env, { ENVELOPES_URL: await urlOf('envelopes', replica), INTERNAL_JWT_PRIVATE_KEY: JSON.stringify(keys.privateJwk), SMTP_URL: smtpUrl });
      }
      // Parallel zstd frames run on libuv's pool, sized at process start.
      if (service === 'mover') env.UV_THREADPOOL_SIZE = String(Math.max(4, availableParallelism()));
      await supervisor.start({ name: replicaName(service, replica), service, entry: `services/${service}/src/main.ts`, env });
    }
    const replicaUrls = Object.fromEntries(
      await Promise.all(STACK_SERVICES.map(async (service) => [service, await Promise.all(Array.from({ length: replicas }, (_, index) => urlOf(service, index + 1)))] as const)),
    ) as Record<StackService, string[]>;
    const serviceUrls = Object.fromEntries(STACK_SERVICES.map((service) => [service, replicaUrls[service][0]])) as Record<StackService, string>;
    const routed = gatewayServiceUrls(Object.fromEntries(Object.entries(replicaUrls).filter(([name]) => !WORKERS.includes(name as StackService))));
    await supervisor.start({
      name: 'gateway',
      service: 'gateway',
      entry: 'gateway/src/main.ts',
      env: {
        ...common,
        PORT: String(gatewayPort),
        SERVICE_URLS: JSON.stringify(routed),
        INTERNAL_JWT_PRIVATE_KEY: JSON.stringify(keys.privateJwk),
        // Strata's access proxy is replaced by the gateway's dev issuer on a local machine (`strata login`).
        STRATA_DEV_ISSUER: 'true',
        STRATA_DEV_ISSUER_KEY: devIssuerKey,
        // A bench or test that built its own copy of the app serves it (others' builds rewrite the shared one).
        ...webAppDirs(options.env ?? process.env),
      },
    });
    const gatewayUrl = await supervisor.waitReady('gateway');
    const seed = await seedFirstOrganization(options.stateDir, gatewayUrl, log);
    const demo = await ensureDemoDatabases(infra, log);
    await writeStackFacts(options.stateDir, gatewayUrl, infra, demo, localIdp);
    return {
      gatewayUrl,
      serviceUrls,
      replicaUrls,
      replicas,
      infra,
      seed,
      demo,
      processes: supervisor.processes,
      killAndRestart: (name) => supervisor.killAndRestart(name),
      localIdp,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * `stack.json` in the state directory: where this stack's servers are and how to reach them, for tools on the same
 * machine (`strata quickstart` writes its resources from it). Local credentials only; mode 0600.
 */
export const STACK_FACTS_FILE = 'stack.json';

async function writeStackFacts(stateDir: string, gatewayUrl: string, infra: Stack['infra'], demo: { postgres: boolean; mysql: boolean }, localIdp: LocalIdpFacts): Promise<void> {
  // `demoDatabase`: the demo database the stack keeps in that server (its own servers only); quickstart targets it.
  const demoOf = (held: boolean) => (held ? { demoDatabase: DEMO_DATABASE } : {});
  const facts = {
    gatewayUrl,
    s3: { endpoint: infra.s3.endpoint, region: infra.s3.region, accessKey: infra.s3.accessKey, secretKey: infra.s3.secretKey, embedded: infra.s3.source === 'started' },
    postgres: { url: infra.postgres.adminUrl, ...demoOf(demo.postgres) },
    mysql: { url: infra.mysql.adminUrl, ...demoOf(demo.mysql) },
    localIdp,
  };
  await writeFile(path.join(stateDir, STACK_FACTS_FILE), JSON.stringify(facts, null, 2) + '\n', { mode: 0o600 });
}

/**
 * The local identity provider (docs/local-idp.md) on the port it had last time when that is free (a saved SSO
 * connection names it), with the keys and client secret it had; the OpenID client may return to the gateway's
 * callback.
 */
async function startStackIdp(stateDir: string, publicUrl: string, log: (line: string) => void): Promise<LocalIdp> {
  const { generateLocalIdpKeys, startLocalIdp } = await import('@sigil/local-idp');
  const saved = JSON.parse(
    await persistentSecret(stateDir, 'local-idp.json', async () => JSON.stringify({ port: await freeListenPort(), clientSecret: randomBytes(24).toString('base64url'), keys: await generateLocalIdpKeys() })),
  ) as { port: number; clientSecret: string; keys: LocalIdpKeys };
  const port = await pickPort(saved.port);
  if (port !== saved.port) log(`local identity provider: port ${saved.port} is taken, using ${port} (SSO connections made against the old address need its new one)`);
  return startLocalIdp({ host: '127.0.0.1', port, clientSecret: saved.clientSecret, keys: saved.keys, redirectUris: [`${publicUrl}/v1/auth/sso/oidc/callback`] });
}

/** DASHBOARD_DIST_DIR and CONSOLE_DIST_DIR when set: a bench or test that built its own copy of an app serves it. */
function webAppDirs(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries((['DASHBOARD_DIST_DIR', 'CONSOLE_DIST_DIR'] as const).flatMap((name) => (env[name] ? [[name, env[name]]] : [])));
}

async function internalKeys(stateDir: string): Promise<InternalKeyPair> {
  const file = path.join(stateDir, 'internal-jwt-key.json');
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as InternalKeyPair;
  const keys = await generateInternalKeyPair();
  await writeFile(file, JSON.stringify(keys), { mode: 0o600 });
  return keys;
}

/** A value generated once and kept in the state directory, so restarts keep tokens and sealed secrets readable. */
async function persistentSecret(stateDir: string, name: string, generate: () => Promise<string>): Promise<string> {
  const file = path.join(stateDir, name);
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const value = await generate();
  await writeFile(file, value, { mode: 0o600 });
  return value;
}

/**
 * The first organization, its owner and a test-mode API key, created through the public API.
 * Kept in the state directory so a restart reuses them; a key that stopped working is replaced.
 */
export async function seedFirstOrganization(stateDir: string, gatewayUrl: string, log: (line: string) => void): Promise<SeedResult> {
  const file = path.join(stateDir, 'seed.json');
  const saved = existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as SeedResult) : undefined;
  let cookie: string | undefined;
  let organizationId = '';
  const ownerEmail = saved?.ownerEmail ?? 'owner@sigil.local';
  const ownerPassword = saved?.ownerPassword ?? `local-${crypto.randomUUID()}`;
  if (saved) {
    const signIn = await call(gatewayUrl, 'POST', '/v1/auth/sign-in', { email: ownerEmail, password: ownerPassword });
    // 401: this accounts database does not know the saved owner (its databases were dropped, or it is another server).
    if (signIn.status === 401) log(`the owner saved in ${file} is not in this stack's accounts database; seeding it again`);
    else if (signIn.status !== 200) throw new Error(`Seeded owner can no longer sign in (${signIn.status}); delete ${file} and the databases to start afresh`);
    else {
      cookie = signIn.cookie;
      organizationId = signIn.body.organization.id;
      const check = await fetch(`${gatewayUrl}/v1/templates?limit=1`, { headers: { authorization: `Bearer ${saved.testApiKey}` } });
      if (check.ok) return saved;
      log('seeded API key no longer works; creating a new one');
    }
  }
  if (!cookie) {
    const signUp = await call(gatewayUrl, 'POST', '/v1/auth/sign-up', { organizationName: 'Local Organization', name: 'Local Owner', email: ownerEmail, password: ownerPassword });
    if (signUp.status !== 201) throw new Error(`Seeding failed: sign-up answered ${signUp.status} ${JSON.stringify(signUp.body)}`);
    cookie = signUp.cookie;
    organizationId = signUp.body.organization.id;
  }
  const key = await call(gatewayUrl, 'POST', '/v1/api-keys', { name: 'Local test key', mode: 'test' }, cookie);
  if (key.status !== 201) throw new Error(`Seeding failed: API key creation answered ${key.status} ${JSON.stringify(key.body)}`);
  const seed = { organizationId, ownerEmail, ownerPassword, testApiKey: String(key.body.secret) };
  await writeFile(file, JSON.stringify(seed, null, 2), { mode: 0o600 });
  return seed;
}

async function call(base: string, method: string, pathName: string, body: unknown, cookie?: string) {
  const res = await fetch(`${base}${pathName}`, {
    method,
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
  const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('sigil_session=')) ?? '';
  return { status: res.status, body: (await res.json().catch(() => ({}))) as SeedAnswer, cookie: setCookie.split(';')[0] ?? '' };
}

/** The members of the sign-up, sign-in and API-key answers the seeding reads (api-decisions.md). */
interface SeedAnswer {
  organization: { id: string };
  secret?: string;
}
