import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { generateAgeIdentity } from '@strata/stream';
import { mailTo } from '../e2e/hosted-pages.ts';
import { upgradeTo } from '../e2e/sso.ts';
import { bearer, call, publishOneRoleTemplate, signUp, until, type TestStack } from '../e2e/stack.ts';

/** Records a secret the logs must never hold: what it is, and its value. */
export type Remember = (what: string, value: string) => void;

/**
 * Token shapes that must never be logged whoever they belong to (long enough that an id or a prefix shown on purpose
 * does not match): API keys, signer sessions and access tokens, viewer links and access tokens, SCIM tokens, webhook
 * secrets, age identities, and any JWT (access tokens, the internal principal tokens).
 */
export const SECRET_SHAPES: Array<[what: string, pattern: RegExp]> = [
  ['an API key', /sgl_(test|live)_[A-Za-z0-9]{16,}/],
  ['a signing session token', /sgls_[A-Za-z0-9_-]{16,}/],
  ['a signer access token', /sgla_[A-Za-z0-9_-]{16,}/],
  ['a viewer link token', /sglv_[A-Za-z0-9_-]{16,}/],
  ['a viewer access token', /sglva_[A-Za-z0-9_-]{16,}/],
  ['a SCIM token', /sglscim_[A-Za-z0-9_-]{16,}/],
  ['a webhook secret', /whsec_[A-Za-z0-9+/=]{16,}/],
  ['an age identity', /AGE-SECRET-KEY-1[0-9A-Z]{20,}/],
  ['a JWT', /eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}/],
];

/**
 * A paying organization's flows that handle secrets, through the gateway: a webhook endpoint (its secret created,
 * rotated, revealed, and a signed delivery to a local receiver), a signer (session token, access token), a viewer
 * (link token from the e-mail, access token), an always-on link (the session its one-time code opens), SCIM (token and
 * a request), an OIDC connection (client secret).
 */
export async function paidOrganizationFlows(stack: TestStack, tag: string, remember: Remember): Promise<void> {
  const base = stack.gatewayUrl;
  const owner = `secrets.${tag}@example.com`;
  const { cookie } = await signUp(base, owner, 'Secret Keepers');
  remember('session token (paid organization)', cookie.split('=')[1] as string);
  // Business: SCIM is on no smaller plan.
  await upgradeTo(base, cookie, 'business');
  const headers = { cookie };
  const api = (method: string, path: string, body?: unknown) => call(base, method, path, { headers, body });

  // Webhooks: a receiver on loopback (the stack allows it) that keeps each delivery's signature.
  const signatures: string[] = [];
  const receiver = http.createServer((req, res) => {
    signatures.push(String(req.headers['webhook-signature'] ?? ''));
    req.resume().on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const endpoint = await api('POST', '/v1/webhook-endpoints', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    remember('webhook secret (created)', endpoint.body.secret);
    expect((await api('POST', `/v1/webhook-endpoints/${endpoint.body.id}/test`)).status).toBe(202);
    await until(async () => signatures.length, (count) => count > 0);
    for (const signature of signatures) for (const part of signature.split(' ')) remember('webhook signature', part.replace(/^v1,/, ''));
    const rotated = await api('POST', `/v1/webhook-endpoints/${endpoint.body.id}/secret/rotate`);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    remember('webhook secret (rotated)', rotated.body.secret);
    const revealed = await api('POST', `/v1/webhook-endpoints/${endpoint.body.id}/secret`);
    expect(revealed.status).toBe(200);
  } finally {
    receiver.closeAllConnections();
    receiver.close();
  }

  // A signer and a viewer of one envelope.
  const templateId = await publishOneRoleTemplate(base, headers, 'Secrets agreement', 'signer');
  const since = new Date().toISOString();
  const viewerEmail = `viewer.${tag}@example.com`;
  const envelope = await api('POST', '/v1/envelopes', { template: templateId, recipients: [{ role: 'signer', name: 'Sam Signer', email: `sam.${tag}@example.com`, delivery: 'embedded' }], viewers: [{ email: viewerEmail }] });
  expect(envelope.status, JSON.stringify(envelope.body)).toBe(201);
  // Rendered in the background: the recipient's turn comes once it is sent.
  await until(() => api('GET', `/v1/envelopes/${envelope.body.id}`), (r) => r.body.status === 'sent');
  const session = await api('POST', `/v1/envelopes/${envelope.body.id}/sessions`, { recipient: envelope.body.recipients[0].id });
  expect(session.status, JSON.stringify(session.body)).toBe(201);
  remember('signing session token', session.body.token);
  const signer = await call(base, 'POST', '/v1/signing/exchange', { body: { token: session.body.token } });
  expect(signer.status, JSON.stringify(signer.body)).toBe(200);
  remember('signer access token', signer.body.accessToken);
  expect((await call(base, 'GET', '/v1/signing/session', { headers: bearer(signer.body.accessToken) })).status).toBe(200);
  const viewerMail = await mailTo(stack, viewerEmail, since, (mail) => mail.text.includes('#token=sglv_'));
  const viewerToken = /#token=(sglv_[A-Za-z0-9_-]+)/.exec(viewerMail.text)?.[1] as string;
  remember('viewer link token', viewerToken);
  const viewer = await call(base, 'POST', '/v1/viewer/exchange', { body: { token: viewerToken } });
  expect(viewer.status, JSON.stringify(viewer.body)).toBe(200);
  remember('viewer access token', viewer.body.accessToken);
  expect((await call(base, 'GET', '/v1/viewer/envelope', { headers: bearer(viewer.body.accessToken) })).status).toBe(200);

  // An always-on link: the visitor's one-time code and the session it opens.
  const link = await api('POST', '/v1/signing-links', { template: templateId, role: 'signer', title: 'Secrets link' });
  expect(link.status, JSON.stringify(link.body)).toBe(201);
  const visitor = `visitor.${tag}@example.com`;
  const linkSince = new Date().toISOString();
  const started = await call(base, 'POST', `/v1/links/${link.body.id}/start`, { body: { name: 'Vera Visitor', email: visitor } });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  const code = /\b(\d{6})\b/.exec((await mailTo(stack, visitor, linkSince, (mail) => /\b\d{6}\b/.test(mail.subject))).subject)?.[1] as string;
  const verified = await call(base, 'POST', `/v1/links/${link.body.id}/verify`, { body: { verification: started.body.verification, email: visitor, code } });
  expect(verified.status, JSON.stringify(verified.body)).toBe(201);
  remember('link session token', verified.body.session.token);

  // SCIM and SSO.
  const scim = await api('POST', '/v1/scim/token');
  expect(scim.status, JSON.stringify(scim.body)).toBe(201);
  remember('SCIM token', scim.body.token);
  expect((await call(base, 'GET', '/scim/v2/Users', { headers: { ...bearer(scim.body.token), accept: 'application/scim+json' } })).status).toBe(200);
  const idp = stack.localIdp;
  remember('SSO client secret', idp.oidcClientSecret);
  const sso = await api('PUT', '/v1/sso/connections/secrets-oidc/settings', { protocol: 'oidc', issuer: idp.oidcIssuer, clientId: idp.oidcClientId, clientSecret: idp.oidcClientSecret, domains: [`secrets-${tag}.example.com`] });
  expect(sso.status, JSON.stringify(sso.body)).toBeLessThan(300);
}

/** Strata: an access token in each of its three places, secret values (a password, an age identity) written and listed. */
export async function strataFlows(stack: TestStack, tag: string, remember: Remember): Promise<void> {
  const base = stack.gatewayUrl;
  const token = (await call(base, 'POST', '/api/dev/token', { body: { email: `logs.${tag}@example.test`, role: 'restorer-admin' } })).body.token as string;
  remember('access token', token);
  expect((await call(base, 'GET', '/api/v1/whoami', { headers: { 'cf-access-jwt-assertion': token } })).status).toBe(200);
  expect((await call(base, 'GET', '/api/v1/targets', { headers: { 'cf-access-token': token } })).status).toBe(200);
  const cookie = { cookie: `CF_Authorization=${token}` };
  const secretValue = `s3cr3t-${tag}-value`;
  remember('secret value', secretValue);
  const age = await generateAgeIdentity();
  remember('age identity', age.identity);
  expect((await call(base, 'PUT', '/api/v1/secrets/default/logs', { body: { data: { password: secretValue } }, headers: cookie })).status).toBe(200);
  expect((await call(base, 'PUT', '/api/v1/secrets/default/backup-key', { body: { data: { identity: age.identity } }, headers: cookie })).status).toBe(200);
  expect((await call(base, 'GET', '/api/v1/secrets', { headers: cookie })).status).toBe(200);
}
