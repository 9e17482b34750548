import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, call, startTestStack, type Reply, type TestStack } from '../e2e/stack.ts';
import { createContractValidator } from './validator.ts';

/** Real responses of every implemented operation, success and failure, against the OpenAPI document. */
let stack: TestStack;
const contract = createContractValidator();
const problems: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
}, 180_000);
afterAll(async () => stack?.stop(), 60_000);

async function checked(method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
  const res = await call(stack.gatewayUrl, method, path, options);
  problems.push(...contract.check(method, path, res.status, res.headers, res.body));
  return res;
}

describe('responses match the OpenAPI document', () => {
  it('for the dashboard auth, API key and template operations', async () => {
    const email = `contract-${Date.now()}@example.com`;
    const signUp = await fetch(`${stack.gatewayUrl}/v1/auth/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ organizationName: 'Contract Co', name: 'Casey', email, password: 'a long enough password' }),
    });
    problems.push(...contract.check('POST', '/v1/auth/sign-up', signUp.status, signUp.headers, await signUp.json()));
    const cookie = (signUp.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
    const session = { cookie };

    await checked('POST', '/v1/auth/sign-up', { body: { organizationName: 'x' } });
    await checked('POST', '/v1/auth/sign-in', { body: { email, password: 'wrong password!' } });
    await checked('POST', '/v1/auth/sign-in', { body: { email, password: 'a long enough password' } });
    await checked('GET', '/v1/auth/session', { headers: session });
    await checked('GET', '/v1/auth/session');
    await checked('GET', '/v1/organization/members', { headers: session });

    const key = await checked('POST', '/v1/api-keys', { body: { name: 'contract', mode: 'test' }, headers: session });
    await checked('POST', '/v1/api-keys', { body: { name: 'bad', mode: 'sandbox' }, headers: session });
    await checked('POST', '/v1/api-keys', { body: { name: 'x', mode: 'test' }, headers: bearer(key.body.secret) });
    await checked('GET', '/v1/api-keys?limit=1', { headers: session });
    const auth = bearer(key.body.secret);

    const created = await checked('POST', '/v1/templates', { body: { name: 'Contract template', metadata: { a: 'b' } }, headers: { ...auth, 'Idempotency-Key': 'contract-1' } });
    await checked('POST', '/v1/templates', { body: { name: 'Contract template', metadata: { a: 'b' } }, headers: { ...auth, 'Idempotency-Key': 'contract-1' } });
    await checked('POST', '/v1/templates', { body: { name: 'Other' }, headers: { ...auth, 'Idempotency-Key': 'contract-1' } });
    await checked('POST', '/v1/templates', { body: { name: 1 }, headers: auth });
    await checked('POST', '/v1/templates', { body: { name: 'x' } });
    await checked('GET', '/v1/templates?limit=1', { headers: auth });
    await checked('GET', '/v1/templates?limit=1000', { headers: auth });
    await checked('GET', `/v1/templates/${created.body.id}`, { headers: auth });
    await checked('GET', '/v1/templates/tpl_0000000000000000', { headers: auth });
    await checked('DELETE', `/v1/templates/${created.body.id}`, { headers: auth });
    await checked('DELETE', `/v1/api-keys/${key.body.id}`, { headers: session });
    await checked('GET', '/v1/templates', { headers: auth });
    await checked('POST', '/v1/auth/sign-out', { headers: session });
    await checked('GET', '/v1/openapi.json');

    expect(problems).toEqual([]);
    expect([...contract.checked].sort()).toEqual(
      expect.arrayContaining([
        'createTemplate 201', 'createTemplate 400', 'createTemplate 401', 'createTemplate 422',
        'listTemplates 200', 'listTemplates 400', 'listTemplates 401', 'getTemplate 200', 'getTemplate 404', 'deleteTemplate 204',
        'createApiKey 201', 'createApiKey 400', 'createApiKey 401', 'listApiKeys 200', 'revokeApiKey 204',
      ]),
    );
  });
});
