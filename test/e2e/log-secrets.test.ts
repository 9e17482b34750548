import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, call, createKey, signIn, signUp, startTestStack, type TestStack } from './stack.ts';

/**
 * The whole e2e story at trace level, then every log line of every process is searched for every secret the story
 * used: passwords, API keys, session tokens, access tokens, the internal principal tokens, secret values.
 */
let stack: TestStack;
const secrets = new Map<string, string>();
const remember = (what: string, value: string) => secrets.set(what, value);

beforeAll(async () => {
  stack = await startTestStack({ logLevel: 'trace' });
}, 180_000);
afterAll(async () => stack?.stop(), 60_000);

/** Every line of every process log, with where it came from. */
async function logLines(): Promise<Array<{ file: string; line: number; text: string }>> {
  const dir = path.join(stack.stateDir, 'logs');
  const lines: Array<{ file: string; line: number; text: string }> = [];
  for (const file of await readdir(dir)) {
    const text = await readFile(path.join(dir, file), 'utf8');
    text.split('\n').forEach((line, index) => lines.push({ file, line: index + 1, text: line }));
  }
  return lines;
}

describe('logs', () => {
  it('never hold a credential, a token or a secret value, at any level', async () => {
    const base = stack.gatewayUrl;
    // Sigil: sign-up and sign-in (password, session cookie), a new API key, calls with both key headers, GraphQL.
    const email = `logs-${Date.now()}@example.test`;
    const password = 'correct horse battery staple';
    remember('password', password);
    const { cookie } = await signUp(base, email, 'Log Secrets Inc');
    remember('session token (sign-up)', cookie.split('=')[1] as string);
    const signedIn = await signIn(base, email, password);
    remember('session token (sign-in)', signedIn.split('=')[1] as string);
    const key = await createKey(base, signedIn, { name: 'logs', mode: 'test', scopes: ['template:read', 'template:write'] });
    remember('API key', key.secret);
    remember('seeded API key', stack.seed.testApiKey);
    expect((await call(base, 'POST', '/v1/templates', { body: { name: 'Logged?' }, headers: bearer(key.secret) })).status).toBe(201);
    expect((await call(base, 'GET', '/v1/templates?limit=1', { headers: { 'x-api-key': key.secret } })).status).toBe(200);
    expect((await call(base, 'GET', '/v1/templates', { headers: bearer('sgl_test_' + 'x'.repeat(32)) })).status).toBe(401);
    expect((await call(base, 'GET', '/v1/api-keys', { headers: { cookie: signedIn } })).status).toBe(200);
    expect((await call(base, 'POST', '/graphql', { body: { query: '{ organization { id } }' }, headers: bearer(key.secret) })).status).toBe(200);

    // Strata: an access token in each of its three places, a secret value written and listed.
    const token = (await call(base, 'POST', '/api/dev/token', { body: { email: 'logs@example.test', role: 'restorer-admin' } })).body.token as string;
    remember('access token', token);
    expect((await call(base, 'GET', '/api/v1/whoami', { headers: { 'cf-access-jwt-assertion': token } })).status).toBe(200);
    expect((await call(base, 'GET', '/api/v1/targets', { headers: { 'cf-access-token': token } })).status).toBe(200);
    const secretValue = `s3cr3t-${Date.now()}-value`;
    remember('secret value', secretValue);
    const put = await call(base, 'PUT', '/api/v1/secrets/default/logs', { body: { data: { password: secretValue } }, headers: { cookie: `CF_Authorization=${token}` } });
    expect(put.status).toBe(200);
    expect((await call(base, 'GET', '/api/v1/secrets', { headers: { cookie: `CF_Authorization=${token}` } })).status).toBe(200);

    const lines = await logLines();
    // The requests above are in the logs (so a leak would be too).
    expect(lines.some((l) => l.file === 'gateway.log' && l.text.includes('"path":"/api/v1/secrets/default/logs"'))).toBe(true);
    expect(lines.some((l) => l.file === 'templates.log' && l.text.includes('/v1/templates'))).toBe(true);
    const leaks = lines.flatMap(({ file, line, text }) => [
      ...[...secrets].filter(([, value]) => text.includes(value)).map(([what]) => `${file}:${line}: ${what}`),
      // Any JWT at all: access tokens and the internal principal tokens (x-sigil-principal, x-strata-principal).
      ...(/eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}/.test(text) ? [`${file}:${line}: a JWT`] : []),
    ]);
    expect(leaks).toEqual([]);
  });
});
