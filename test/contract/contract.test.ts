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

  it('for the public evidence operations (no anchors yet on a fresh stack)', async () => {
    const before = problems.length;
    await checked('GET', '/.well-known/sigil/keys.json');
    await checked('GET', '/v1/public/anchors?limit=5');
    await checked('GET', '/v1/public/anchors?mode=test');
    await checked('GET', '/v1/public/anchors?mode=sandbox');
    await checked('GET', '/v1/public/anchors/latest');
    await checked('GET', '/v1/public/anchors/1');
    await checked('GET', '/v1/public/anchors/2/consistency?from=1');
    await checked('POST', '/v1/public/verify', { body: { sha256: 'a'.repeat(64) } });
    await checked('POST', '/v1/public/verify', { body: { sha256: 'not a hash' } });
    expect(problems.slice(before)).toEqual([]);
    expect([...contract.checked]).toEqual(
      expect.arrayContaining(['getEvidenceKeys 200', 'listAnchors 200', 'listAnchors 400', 'getLatestAnchor 404', 'getAnchor 404', 'getAnchorConsistency 404', 'verifyDocument 404', 'verifyDocument 400']),
    );
  });

  it('for the webhook operations', async () => {
    const before = problems.length;
    const signIn = await fetch(`${stack.gatewayUrl}/v1/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: stack.seed.ownerEmail, password: stack.seed.ownerPassword }),
    });
    const session = { cookie: (signIn.headers.getSetCookie()[0] ?? '').split(';')[0] as string };
    const created = await checked('POST', '/v1/webhook-endpoints', { body: { url: 'http://127.0.0.1:9/hook', description: 'contract', events: ['envelope.completed'] }, headers: { ...session, 'Idempotency-Key': 'contract-we-1' } });
    await checked('POST', '/v1/webhook-endpoints', { body: { url: 'https://10.0.0.1/hook' }, headers: session });
    await checked('POST', '/v1/webhook-endpoints', { body: { url: 'https://example.com', events: ['nope'] }, headers: session });
    await checked('POST', '/v1/webhook-endpoints', { body: { url: 'http://127.0.0.1:9/hook' }, headers: bearer(stack.seed.testApiKey) });
    const id = created.body.id;
    await checked('GET', '/v1/webhook-endpoints?limit=5', { headers: session });
    await checked('GET', `/v1/webhook-endpoints/${id}`, { headers: session });
    await checked('GET', '/v1/webhook-endpoints/we_0000000000000000', { headers: session });
    await checked('PATCH', `/v1/webhook-endpoints/${id}`, { body: { enabled: false, description: 'paused' }, headers: session });
    await checked('POST', `/v1/webhook-endpoints/${id}/secret`, { headers: session });
    await checked('POST', `/v1/webhook-endpoints/${id}/secret/rotate`, { headers: session });
    const ping = await checked('POST', `/v1/webhook-endpoints/${id}/test`, { headers: session });
    await checked('GET', `/v1/webhook-endpoints/${id}/deliveries?limit=5`, { headers: session });
    await checked('POST', `/v1/events/${ping.body.eventId}/redeliver`, { body: { endpoint: id }, headers: { ...session, 'Idempotency-Key': 'contract-redeliver-1' } });
    await checked('POST', '/v1/events/evt_0000000000000000/redeliver', { body: {}, headers: session });
    await checked('DELETE', `/v1/webhook-endpoints/${id}`, { headers: session });
    expect(problems.slice(before)).toEqual([]);
    expect([...contract.checked]).toEqual(
      expect.arrayContaining([
        'createWebhookEndpoint 201', 'createWebhookEndpoint 400', 'createWebhookEndpoint 403', 'listWebhookEndpoints 200', 'getWebhookEndpoint 200', 'getWebhookEndpoint 404',
        'updateWebhookEndpoint 200', 'revealWebhookEndpointSecret 200', 'rotateWebhookEndpointSecret 200', 'testWebhookEndpoint 202', 'listWebhookDeliveries 200',
        'redeliverEvent 202', 'redeliverEvent 404', 'deleteWebhookEndpoint 204',
      ]),
    );
  });
});
