import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBase62 } from '@sigil/kit/ids';
import { testResultPage } from '@sigil/accounts/sso/pages';
import { upgradeToTeam } from '../e2e/checkout.ts';
import { bearer, call, signUp, startTestStack, type TestStack } from '../e2e/stack.ts';
import { quick } from './mode.ts';
import { bodyOf, cookieAuthenticatedWrites, CROSS_ORIGIN, isCsrfRefusal, upgradeStatus, type CookieWrite } from './security-csrf.ts';
import { cookieProblems, declaredMounts, PAGE_MOUNTS, pagePaths, pageProblems } from './security-pages.ts';
import { startGatewayBehindTls, type SecondGateway } from './security-tls-gateway.ts';

/**
 * Issue 32, point 5, through real gateways in front of one stack: the stack's own (nothing in front, `TRUSTED_PROXIES`
 * 0) and a second one configured as behind a TLS-terminating proxy (`TRUSTED_PROXIES=1`, the caller plays the proxy).
 * Every hosted page's headers, every cookie our code sets, and the CSRF refusal on every cookie-authenticated write
 * the contracts list. The SSRF cases are in ssrf.test.ts; the log check in test/e2e/log-secrets.test.ts.
 */
let stack: TestStack;
let tls: SecondGateway;
const OVER_TLS = { 'x-forwarded-proto': 'https' };
const tag = randomBase62(6).toLowerCase();

beforeAll(async () => {
  stack = await startTestStack();
  tls = await startGatewayBehindTls(stack);
}, 180_000);
afterAll(async () => {
  await tls?.stop();
  await stack?.stop();
}, 60_000);

describe('hosted pages', () => {
  it('every page mount of the gateway has a row (a new page cannot go unchecked)', () => {
    expect(declaredMounts().sort()).toEqual(PAGE_MOUNTS.map((row) => row.mount).sort());
  });

  it("every page: CSP without 'unsafe-inline', framing as the embed needs and no more, nosniff, a referrer policy", async () => {
    const problems: string[] = [];
    let pages = 0;
    for (const row of PAGE_MOUNTS) {
      for (const path of pagePaths(row)) {
        const res = await fetch(`${stack.gatewayUrl}${path}`);
        const html = await res.text();
        if (res.status !== 200) problems.push(`${path}: ${res.status}`);
        problems.push(...pageProblems(res.headers, html, row.embeddable).map((problem) => `${path}: ${problem}`));
        pages++;
      }
    }
    expect(problems).toEqual([]);
    expect(pages).toBeGreaterThanOrEqual(15);
  });

  it("the dashboard's and console's style nonce is fresh on every load, and nothing else carries one", async () => {
    const nonceOf = async (path: string) => /'nonce-([^']+)'/.exec((await fetch(`${stack.gatewayUrl}${path}`)).headers.get('content-security-policy') ?? '')?.[1];
    const [first, second] = [await nonceOf('/app'), await nonceOf('/app')];
    expect(first).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(second).not.toBe(first);
    for (const path of ['/app/live', '/app/assets/gone.js', '/console/assets/gone.js']) expect(await nonceOf(path), path).toBeUndefined();
  });

  it("the answers under the pages' paths that are not pages are never sniffed", async () => {
    for (const path of ['/sign/sign.js', '/sign/embed.js', '/sign/vendor/pdfjs/pdf.min.mjs', '/view/viewer.js', '/l/link.js', '/verify/verify.js', '/app/assets/gone.js', '/l/not-a-link']) {
      const res = await fetch(`${stack.gatewayUrl}${path}`);
      await res.body?.cancel();
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
  });

  it("SSO's own page (a test login's outcome, served by accounts through the gateway) follows the same rules", () => {
    for (const reply of [testResultPage(true), testResultPage(false, '<b>refused</b>')]) {
      expect(pageProblems(new Headers(reply.headers as Record<string, string>), String(reply.body), false)).toEqual([]);
    }
  });

  it('HSTS on every answer that came over TLS, and only then (a caller cannot claim TLS to a gateway that trusts no proxy)', async () => {
    const hsts = async (base: string, path: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}${path}`, { headers });
      await res.body?.cancel();
      return res.headers.get('strict-transport-security');
    };
    for (const path of ['/sign', '/app', '/verify', '/v1/openapi.json', '/v1/templates', '/api/v1/whoami', '/nowhere']) {
      expect(await hsts(tls.url, path, OVER_TLS), path).toMatch(/^max-age=(\d+)/);
      expect(Number(/max-age=(\d+)/.exec((await hsts(tls.url, path, OVER_TLS)) ?? '')?.[1]), path).toBeGreaterThanOrEqual(31_536_000);
      expect(await hsts(tls.url, path), `${path} over plain http`).toBeNull();
      expect(await hsts(stack.gatewayUrl, path, OVER_TLS), `${path} claimed TLS, no trusted proxy`).toBeNull();
    }
  });
});

describe('cookies', () => {
  /** The Set-Cookie lines of one request. */
  const setCookies = async (base: string, method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      redirect: 'manual',
      headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    await res.body?.cancel();
    return { status: res.status, lines: res.headers.getSetCookie() };
  };

  it('every cookie our code sets is HttpOnly, SameSite and Path=/, and Secure behind TLS', async () => {
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const [base, overTls] of [[stack.gatewayUrl, false], [tls.url, true]] as const) {
      const headers = overTls ? OVER_TLS : {};
      const email = `cookies.${overTls ? 'tls' : 'plain'}.${tag}@example.com`;
      const signedUp = await setCookies(base, 'POST', '/v1/auth/sign-up', { headers, body: { organizationName: 'Cookie Co', name: 'Cee', email, password: 'correct horse battery staple' } });
      const signedIn = await setCookies(base, 'POST', '/v1/auth/sign-in', { headers, body: { email, password: 'correct horse battery staple' } });
      const session = (signedIn.lines[0] ?? '').split(';')[0] as string;
      const signedOut = await setCookies(base, 'POST', '/v1/auth/sign-out', { headers: { ...headers, cookie: session } });
      const strataIn = await setCookies(base, 'POST', '/api/dev/session', { headers, body: { email: `console.${tag}@example.com`, role: 'viewer' } });
      const strataOut = await setCookies(base, 'DELETE', '/api/dev/session', { headers });
      const answers = { 'sign-up': signedUp, 'sign-in': signedIn, 'sign-out': signedOut, 'console session': strataIn, 'console sign-out': strataOut };
      for (const [what, answer] of Object.entries(answers)) {
        if (answer.lines.length === 0) problems.push(`${what}${overTls ? ' (TLS)' : ''}: answered ${answer.status} without a cookie`);
        for (const line of answer.lines) {
          seen.add(line.split('=')[0] as string);
          problems.push(...cookieProblems(line, overTls).map((problem) => `${what}${overTls ? ' (TLS)' : ''}: ${problem}`));
        }
      }
    }
    expect(problems).toEqual([]);
    expect([...seen].sort()).toEqual(['CF_Authorization', 'sigil_session']);
  });

  it("SSO's browser binding cookie (login CSRF) is HttpOnly, Secure and SameSite=None for the IdP's cross-site POST", async () => {
    const domain = `cookie-${tag}.example.com`;
    const { cookie } = await signUp(stack.gatewayUrl, `owner@${domain}`, 'SSO Cookie Co');
    await upgradeToTeam(stack.gatewayUrl, cookie);
    const idp = stack.localIdp;
    const saved = await call(stack.gatewayUrl, 'PUT', '/v1/sso/connections/cookie-oidc/settings', {
      headers: { cookie },
      body: { protocol: 'oidc', issuer: idp.oidcIssuer, clientId: idp.oidcClientId, clientSecret: idp.oidcClientSecret, domains: [domain] },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBeLessThan(300);
    for (const [base, overTls] of [[stack.gatewayUrl, false], [tls.url, true]] as const) {
      const start = await setCookies(base, 'GET', `/v1/auth/sso/start?email=${encodeURIComponent(`nina@${domain}`)}`, { headers: overTls ? OVER_TLS : {} });
      expect(start.status).toBe(302);
      expect(start.lines.map((line) => line.split('=')[0])).toEqual(['sigil_sso']);
      expect(cookieProblems(start.lines[0] as string, overTls)).toEqual([]);
    }
  });
});

/** `work` on every item, eight at a time (the gateway's refusals are quick; one by one the sweep is mostly waiting); the non-empty answers. */
async function eachAtOnce<T>(items: T[], work: (item: T) => Promise<string | undefined>): Promise<string[]> {
  const found: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const answer = await work(items[next++] as T);
      if (answer) found.push(answer);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return found;
}

describe('CSRF on cookie-authenticated writes', () => {
  const writes = cookieAuthenticatedWrites();
  let sessionCookie: string;
  let strataCookie: string;
  let apiKey: string;

  beforeAll(async () => {
    ({ cookie: sessionCookie } = await signUp(stack.gatewayUrl, `csrf.${tag}@example.com`, 'CSRF Co'));
    const key = await call(stack.gatewayUrl, 'POST', '/v1/api-keys', { headers: { cookie: sessionCookie }, body: { name: 'csrf', mode: 'live', scopes: ['template:write'] } });
    apiKey = key.body.secret as string;
    const token = (await call(stack.gatewayUrl, 'POST', '/api/dev/token', { body: { email: `csrf.${tag}@example.com`, role: 'restorer-admin' } })).body.token as string;
    strataCookie = `CF_Authorization=${token}`;
  });

  const cookieFor = (write: CookieWrite) => (write.api === 'sigil' ? sessionCookie : strataCookie);
  const send = (write: CookieWrite, headers: Record<string, string>) =>
    call(stack.gatewayUrl, write.method, write.path, { headers: { ...(bodyOf(write) === undefined ? {} : { 'content-type': 'application/json' }), cookie: cookieFor(write), ...headers }, body: bodyOf(write) });

  it('the contracts list the writes (Sigil D and K, every Strata write, GraphQL)', () => {
    expect(writes.filter((w) => w.api === 'sigil').length).toBeGreaterThanOrEqual(40);
    expect(writes.filter((w) => w.api === 'strata').length).toBeGreaterThanOrEqual(16);
    expect(writes.map((w) => w.operationId)).toEqual(expect.arrayContaining(['createApiKey', 'createTemplate', 'signOut', 'putSecret', 'applyResources']));
  });

  it('every one refuses the cookie from another origin, however the browser says so', async () => {
    const cases = writes.flatMap((write) => CROSS_ORIGIN.map((variant) => ({ write, variant })));
    const accepted = await eachAtOnce(cases, async ({ write, variant }) => {
      const res = await send(write, variant.headers);
      return isCsrfRefusal(res.status, res.body) ? undefined : `${write.method} ${write.path} (${write.operationId}), ${variant.name}: ${res.status}`;
    });
    expect(accepted).toEqual([]);
  });

  it('every one goes past the check from its own origin, and from a client that is not a browser', async () => {
    const origin = new URL(stack.gatewayUrl).origin;
    // A client with neither header (not a browser) is what every other test of the suite is; the long mode sends it too.
    const variants = quick<Array<Record<string, string>>>([{ origin, 'sec-fetch-site': 'same-origin' }], [{ origin, 'sec-fetch-site': 'same-origin' }, {}]);
    const check = async ({ write, headers }: { write: CookieWrite; headers: Record<string, string> }) => {
      const res = await send(write, headers);
      return isCsrfRefusal(res.status, res.body) || res.status >= 500 ? `${write.method} ${write.path} (${write.operationId}) ${JSON.stringify(headers)}: ${res.status}` : undefined;
    };
    const cases = (ofWrites: CookieWrite[]) => ofWrites.flatMap((write) => variants.map((headers) => ({ write, headers })));
    // signOut after the others: it ends the session they use.
    const refused = await eachAtOnce(cases(writes.filter((w) => w.operationId !== 'signOut')), check);
    refused.push(...(await eachAtOnce(cases(writes.filter((w) => w.operationId === 'signOut')), check)));
    expect(refused).toEqual([]);
  });

  it('a same-origin write with the cookie succeeds; a credential a page must add itself is never refused', async () => {
    ({ cookie: sessionCookie } = await signUp(stack.gatewayUrl, `csrf.again.${tag}@example.com`, 'CSRF Again Co'));
    const origin = new URL(stack.gatewayUrl).origin;
    const sameOrigin = { origin, 'sec-fetch-site': 'same-origin' };
    expect((await call(stack.gatewayUrl, 'POST', '/v1/templates', { headers: { cookie: sessionCookie, ...sameOrigin }, body: { name: 'Same origin' } })).status).toBe(201);
    const secret = await call(stack.gatewayUrl, 'PUT', `/api/v1/secrets/default/csrf-${tag}`, { headers: { cookie: strataCookie, ...sameOrigin }, body: { data: { password: 'same-origin' } } });
    expect(secret.status, JSON.stringify(secret.body)).toBe(200);
    // Cross-origin with an API key (even with the session cookie along): the key is the credential.
    const keyed = await call(stack.gatewayUrl, 'POST', '/v1/templates', { headers: { ...bearer(apiKey), cookie: sessionCookie, ...CROSS_ORIGIN[0]!.headers }, body: { name: 'Keyed' } });
    expect(keyed.status, JSON.stringify(keyed.body)).toBe(201);
    const token = strataCookie.split('=')[1] as string;
    const headered = await call(stack.gatewayUrl, 'PUT', `/api/v1/secrets/default/csrf-${tag}`, { headers: { 'cf-access-jwt-assertion': token, ...CROSS_ORIGIN[0]!.headers }, body: { data: { password: 'header' } } });
    expect(headered.status, JSON.stringify(headered.body)).toBe(200);
  });

  it("a sandbox tunnel's WebSocket handshake refuses the access cookie from another origin", async () => {
    const path = '/api/v1/sandboxes/probe-sandbox/tunnel';
    for (const variant of CROSS_ORIGIN) {
      const answer = await upgradeStatus(stack.gatewayUrl, path, { cookie: strataCookie, ...variant.headers });
      expect(isCsrfRefusal(answer.status, JSON.parse(answer.body || '{}')), `${variant.name}: ${answer.status} ${answer.body}`).toBe(true);
    }
    const own = await upgradeStatus(stack.gatewayUrl, path, { cookie: strataCookie, origin: new URL(stack.gatewayUrl).origin, 'sec-fetch-site': 'same-origin' });
    expect(isCsrfRefusal(own.status, JSON.parse(own.body || '{}')), `${own.status} ${own.body}`).toBe(false);
  });
});

describe('SSRF at the API: what a caller can make the platform fetch is refused when saved', () => {
  const PRIVATE = ['https://169.254.169.254/latest/meta-data/', 'https://10.0.0.1/hook', 'https://[::ffff:127.0.0.1]/hook', 'https://2130706433/hook', 'https://0x7f.1/hook', 'https://localhost./hook', 'http://192.168.1.10/hook'];

  it('a webhook endpoint and an IdP metadata URL pointing inside the network: 400 beside the field', async () => {
    const { cookie } = await signUp(stack.gatewayUrl, `ssrf.${tag}@example.com`, 'SSRF Co');
    for (const url of PRIVATE) {
      const hook = await call(stack.gatewayUrl, 'POST', '/v1/webhook-endpoints', { headers: { cookie }, body: { url } });
      expect(hook.status, `${url}: ${JSON.stringify(hook.body)}`).toBe(400);
      expect(hook.body.errors?.[0]?.pointer, url).toBe('/body/url');
      const metadata = await call(stack.gatewayUrl, 'POST', '/v1/sso/saml-metadata', { headers: { cookie }, body: { url } });
      expect([400, 403], `${url}: ${JSON.stringify(metadata.body)}`).toContain(metadata.status);
      if (metadata.status === 400) expect(metadata.body.errors?.[0]?.pointer, url).toBe('/body/url');
    }
  });
});
