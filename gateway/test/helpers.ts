import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { PRINCIPAL_HEADER, createPrincipalSigner, createPrincipalVerifier, generateInternalKeyPair, type Principal, type PrincipalSigner, type PrincipalVerifier } from '@sigil/kit/auth';
import { randomBase62 } from '@sigil/kit/ids';
import { apiKeyPrincipal, sessionPrincipal, silentLogger } from '@sigil/kit/testing';
import { createGatewayApp, type GatewayApp, type GatewayDeps } from '../src/app.ts';
import { createAuthenticator, sha256Hex, type Authenticator, type AuthenticatorOptions } from '../src/authenticator.ts';
import { composeSdl } from '../src/compose.ts';
import { primaryOf } from '../src/replicas.ts';
import type { AuthenticateRequest, AuthenticateResponse } from '@sigil/proto/internal-auth';

export { apiKeyPrincipal, sessionPrincipal };

/** A minimal supergraph for tests that do not exercise GraphQL. */
export const PING_SUPERGRAPH = composeSdl([
  { name: 'ping', sdl: 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@shareable"])\ntype Query { ping: String }' },
]);

export const newApiKey = (mode: 'test' | 'live' = 'test'): string => `sgl_${mode}_${randomBase62(32)}`;

export async function listen(app: Express | Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer(app as never);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on. */
export async function closedPortUrl(): Promise<string> {
  const probe = await listen(express());
  await probe.close();
  return probe.url;
}

export interface Echo {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
}

/** Answers every request with what it received (after reading the whole body). */
export function echoHandler(seen?: Echo[]): express.RequestHandler {
  return (req, res) => {
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
    req.on('end', () => {
      const echo = { method: req.method, url: req.originalUrl, headers: req.headers, bodyBytes };
      seen?.push(echo);
      res.status(200).json(echo);
    });
  };
}

type KeyState = 'active' | 'revoked' | 'expired';

/**
 * A stand-in for the accounts service: its internal authenticate endpoint over an in-memory store,
 * `DELETE /v1/api-keys/{id}` and sign-out that revoke in that store, and an echo for everything else.
 */
export interface FakeAccounts {
  url: string;
  /** Every call to the internal endpoint, in order. */
  lookups: AuthenticateRequest[];
  /** Principals the internal endpoint saw on its callers (should be the gateway service principal). */
  callers: Principal[];
  seen: Echo[];
  addKey(overrides?: Partial<Principal>, options?: { mode?: 'test' | 'live'; state?: KeyState; expiresAt?: string }): { key: string; principal: Principal };
  addSession(overrides?: Partial<Principal>): { token: string; principal: Principal };
  setKeyState(key: string, state: KeyState): void;
  /** Makes the internal endpoint fail with this status (0 = healthy). */
  failWith(status: number): void;
  close(): Promise<void>;
}

export async function startFakeAccounts(verify: PrincipalVerifier): Promise<FakeAccounts> {
  const keys = new Map<string, { principal: Principal; state: KeyState; expiresAt?: string }>();
  const sessions = new Map<string, { principal: Principal; state: KeyState; expiresAt?: string }>();
  const lookups: AuthenticateRequest[] = [];
  const callers: Principal[] = [];
  const seen: Echo[] = [];
  let failure = 0;

  const app = express();
  app.post('/internal/v1/authenticate', express.json(), async (req, res) => {
    try {
      callers.push(await verify(String(req.headers[PRINCIPAL_HEADER])));
    } catch {
      res.status(401).json({ error: 'no service principal' });
      return;
    }
    if (failure) {
      res.status(failure).json({ error: 'failing on purpose' });
      return;
    }
    const body = req.body as AuthenticateRequest;
    lookups.push(body);
    const entry = body.type === 'api_key' ? keys.get(body.secretHash) : sessions.get(body.tokenHash);
    const answer: AuthenticateResponse = !entry
      ? { principal: null, reason: 'unknown' }
      : entry.state === 'active'
        ? { principal: entry.principal, expiresAt: entry.expiresAt ?? null }
        : { principal: null, reason: entry.state };
    res.json(answer);
  });
  app.delete('/v1/api-keys/:id', async (req, res) => {
    const principal = await verify(String(req.headers[PRINCIPAL_HEADER])).catch(() => undefined);
    if (principal?.kind !== 'session') {
      res.status(401).json({ error: 'session required' });
      return;
    }
    let found = false;
    for (const entry of keys.values()) {
      if (entry.principal.apiKeyId === req.params.id) {
        entry.state = 'revoked';
        found = true;
      }
    }
    res.status(found ? 204 : 404).end();
  });
  app.post('/v1/auth/sign-out', async (req, res) => {
    const principal = await verify(String(req.headers[PRINCIPAL_HEADER])).catch(() => undefined);
    if (principal?.kind !== 'session') {
      res.status(401).json({ error: 'session required' });
      return;
    }
    for (const entry of sessions.values()) if (entry.principal.sessionId === principal.sessionId) entry.state = 'revoked';
    res.status(204).end();
  });
  app.use(echoHandler(seen));
  const running = await listen(app);

  return {
    url: running.url,
    lookups,
    callers,
    seen,
    addKey(overrides = {}, options = {}) {
      const key = newApiKey(options.mode ?? 'test');
      const principal = apiKeyPrincipal({ mode: options.mode ?? 'test', ...overrides });
      keys.set(sha256Hex(key), { principal, state: options.state ?? 'active', expiresAt: options.expiresAt });
      return { key, principal };
    },
    addSession(overrides = {}) {
      const token = randomBase62(43);
      const principal = sessionPrincipal(overrides);
      sessions.set(sha256Hex(token), { principal, state: 'active' });
      return { token, principal };
    },
    setKeyState(key, state) {
      const entry = keys.get(sha256Hex(key));
      if (!entry) throw new Error('unknown key');
      entry.state = state;
    },
    failWith(status) {
      failure = status;
    },
    close: running.close,
  };
}

export interface TestKeys {
  sign: PrincipalSigner;
  verify: PrincipalVerifier;
}

export async function createTestKeys(): Promise<TestKeys> {
  const pair = await generateInternalKeyPair();
  return { sign: await createPrincipalSigner(pair.privateJwk), verify: await createPrincipalVerifier(pair.publicJwk) };
}

export interface GatewayUnderTest extends GatewayApp {
  authenticator: Authenticator;
}

export async function buildGateway(
  keys: TestKeys,
  serviceUrls: GatewayDeps['serviceUrls'],
  options: { supergraphSdl?: string; authenticator?: Partial<AuthenticatorOptions>; trustProxy?: boolean; trustedProxies?: number; graphLimits?: GatewayDeps['graphLimits']; isNotImplemented?: GatewayDeps['isNotImplemented'] } = {},
): Promise<GatewayUnderTest> {
  const log = silentLogger();
  const authenticator = createAuthenticator({ accountsUrl: serviceUrls.accounts && primaryOf(serviceUrls.accounts), signPrincipal: keys.sign, log, ...options.authenticator });
  const gateway = await createGatewayApp({
    serviceUrls,
    signPrincipal: keys.sign,
    log,
    authenticator,
    supergraphSdl: options.supergraphSdl ?? PING_SUPERGRAPH,
    trustProxy: options.trustProxy,
    trustedProxies: options.trustedProxies,
    graphLimits: options.graphLimits,
    isNotImplemented: options.isNotImplemented,
  });
  return { ...gateway, authenticator };
}

export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
