import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBase62 } from '@sigil/kit/ids';
import { paidOrganizationFlows, SECRET_SHAPES, strataFlows } from '../reliability/security-secret-flows.ts';
import { bearer, call, createKey, signIn, signUp, startTestStack, type TestStack } from './stack.ts';

/**
 * The platform's flows that handle secrets, with every process at trace level; then every line of every log under
 * the stack's `logs/` (each process's, whatever its name) is searched for every secret the flows used, and for the
 * shapes of every kind of token whoever it belongs to: passwords, API keys, session tokens, signer and viewer tokens,
 * link sessions, SCIM tokens, webhook secrets and signatures, the SSO client secret, Strata access tokens, secret
 * values and age identities, the internal principal tokens.
 */
let stack: TestStack;
const secrets = new Map<string, string>();
const remember = (what: string, value: string) => {
  expect(value, what).toEqual(expect.any(String));
  expect(value.length, what).toBeGreaterThanOrEqual(8);
  secrets.set(what, value);
};
const tag = randomBase62(8).toLowerCase();

beforeAll(async () => {
  stack = await startTestStack({ logLevel: 'trace' });
}, 180_000);
afterAll(async () => stack?.stop(), 60_000);

/** Every line of every log file, with where it came from. */
async function logLines(): Promise<{ files: string[]; lines: Array<{ file: string; line: number; text: string }> }> {
  const dir = path.join(stack.stateDir, 'logs');
  const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
  const lines: Array<{ file: string; line: number; text: string }> = [];
  for (const file of files) {
    const text = await readFile(path.join(dir, file), 'utf8');
    text.split('\n').forEach((line, index) => lines.push({ file, line: index + 1, text: line }));
  }
  return { files, lines };
}

describe('logs', () => {
  it('never hold a credential, a token or a secret value, at any level, in any process', { timeout: 120_000 }, async () => {
    const base = stack.gatewayUrl;
    // Sigil: sign-up and sign-in (password, session cookie), a new API key, calls with both key headers, GraphQL.
    const email = `logs-${tag}@example.test`;
    const password = 'correct horse battery staple';
    remember('password', password);
    const { cookie } = await signUp(base, email, 'Log Secrets Inc');
    remember('session token (sign-up)', cookie.split('=')[1] as string);
    const signedIn = await signIn(base, email, password);
    remember('session token (sign-in)', signedIn.split('=')[1] as string);
    const key = await createKey(base, signedIn, { name: 'logs', mode: 'test', scopes: ['template:read', 'template:write'] });
    remember('API key', key.secret);
    remember('seeded API key', stack.seed.testApiKey);
    remember('seeded password', stack.seed.ownerPassword);
    expect((await call(base, 'POST', '/v1/templates', { body: { name: 'Logged?' }, headers: bearer(key.secret) })).status).toBe(201);
    expect((await call(base, 'GET', '/v1/templates?limit=1', { headers: { 'x-api-key': key.secret } })).status).toBe(200);
    expect((await call(base, 'GET', '/v1/templates', { headers: bearer('sgl_test_' + 'x'.repeat(32)) })).status).toBe(401);
    expect((await call(base, 'GET', '/v1/api-keys', { headers: { cookie: signedIn } })).status).toBe(200);
    expect((await call(base, 'POST', '/graphql', { body: { query: '{ organization { id } }' }, headers: bearer(key.secret) })).status).toBe(200);

    await Promise.all([strataFlows(stack, tag, remember), paidOrganizationFlows(stack, tag, remember)]);

    // The shapes are those of the tokens the flows were given (else a shape would find nothing whatever the logs hold).
    const shaped = ['API key', 'signing session token', 'signer access token', 'viewer link token', 'viewer access token', 'SCIM token', 'webhook secret (created)', 'age identity', 'access token'];
    for (const what of shaped) expect(SECRET_SHAPES.some(([, shape]) => shape.test(secrets.get(what) ?? '')), what).toBe(true);

    const { files, lines } = await logLines();
    // Every process writes its own log, and each was read (a process that logged nowhere would hide its leaks).
    for (const { name } of stack.processes) {
      expect(files, name).toContain(`${name}.log`);
      expect(lines.some((l) => l.file === `${name}.log` && l.text.trim() !== ''), `${name}.log is empty`).toBe(true);
    }
    // The requests above are in the logs (so a leak would be too).
    expect(lines.some((l) => l.file === 'gateway.log' && l.text.includes('"path":"/api/v1/secrets/default/logs"'))).toBe(true);
    expect(lines.some((l) => l.file === 'templates.log' && l.text.includes('/v1/templates'))).toBe(true);
    const leaks = lines.flatMap(({ file, line, text }) => [
      ...[...secrets].filter(([, value]) => text.includes(value)).map(([what]) => `${file}:${line}: ${what}`),
      ...SECRET_SHAPES.filter(([, shape]) => shape.test(text)).map(([what]) => `${file}:${line}: ${what}`),
    ]);
    expect(leaks).toEqual([]);
  });
});
