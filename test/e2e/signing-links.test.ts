import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upgradeToTeam } from './checkout.ts';
import { bearer, call, createKey, signIn, publishOneRoleTemplate, startTestStack, until, type TestStack } from './stack.ts';

/**
 * Always-on signing links through the gateway (issue 29): the seeded organization on Free cannot create one; it pays
 * for Team through billing's real flow, creates a link, and a visitor signs without the sender doing anything: their
 * details, the code from the e-mail, the signing session, the submit, a completed envelope. The caps stop the next one.
 */
let stack: TestStack;
let cookie: string;
let live: Record<string, string>;
let templateId: string;
const visitor = `visitor.${Date.now()}@example.com`;


/** The newest one-time code the SMTP sink received for `to` since `since` (the sink is shared by the run's stacks). */
async function codeFor(to: string, since: string): Promise<string> {
  const found = await until(
    async () => {
      const messages = (await (await fetch(`${stack.infra.smtp.inboxUrl}/messages`)).json()) as Array<{ to: string[]; subject: string; text: string; receivedAt: string }>;
      return messages.filter((m) => m.to.includes(to) && m.receivedAt >= since).map((m) => /\b(\d{6})\b/.exec(m.subject)?.[1]).filter(Boolean).at(-1);
    },
    (code) => code !== undefined,
    15_000,
  );
  return found as string;
}

const createLink = () =>
  call(stack.gatewayUrl, 'POST', '/v1/signing-links', { headers: live, body: { template: templateId, role: 'volunteer', title: 'Volunteer sign-up', limits: { perEmailPerDay: 1, dailyCap: 1 } } });

beforeAll(async () => {
  stack = await startTestStack();
  cookie = await signIn(stack.gatewayUrl, stack.seed.ownerEmail, stack.seed.ownerPassword);
  live = bearer((await createKey(stack.gatewayUrl, cookie, { name: 'links', mode: 'live' })).secret);
  templateId = await publishOneRoleTemplate(stack.gatewayUrl, live, 'Volunteer agreement', 'volunteer');
}, 120_000);
afterAll(async () => stack?.stop());

describe('an always-on signing link', () => {
  let linkId: string;

  it('is not on Free: 403 plan-upgrade-required naming the feature', async () => {
    const refused = await createLink();
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body).toMatchObject({ type: expect.stringContaining('plan-upgrade-required'), feature: 'signingLinks' });
  });

  it('is created once the organization is on Team; its template can no longer be deleted', async () => {
    await upgradeToTeam(stack.gatewayUrl, cookie);
    // The envelopes service drops its cached entitlements when billing tells it the plan changed.
    const created = await until(createLink, (r) => r.status !== 403, 10_000);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ status: 'active', testMode: false, role: 'volunteer', version: 1, limits: { perEmailPerDay: 1, perIpPerHour: 20, dailyCap: 1 } });
    linkId = created.body.id;
    expect(created.body.url).toBe(`${stack.gatewayUrl}/l/${linkId}`);
    const deleted = await call(stack.gatewayUrl, 'DELETE', `/v1/templates/${templateId}`, { headers: live });
    expect(deleted.status).toBe(409);
  }, 60_000);

  it('takes a visitor from their e-mail address to a completed envelope, and the caps stop the next one', async () => {
    const shown = await call(stack.gatewayUrl, 'GET', `/v1/links/${linkId}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ object: 'public_signing_link', title: 'Volunteer sign-up', enabled: true, fields: [{ id: 'signature', type: 'signature', required: true }] });

    const since = new Date().toISOString();
    const started = await call(stack.gatewayUrl, 'POST', `/v1/links/${linkId}/start`, { body: { name: 'Ada Lovelace', email: visitor } });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const code = await codeFor(visitor, since);
    const verified = await call(stack.gatewayUrl, 'POST', `/v1/links/${linkId}/verify`, { body: { verification: started.body.verification, email: visitor, code } });
    expect(verified.status, JSON.stringify(verified.body)).toBe(201);
    expect(verified.body.session.url).toBe(`${stack.gatewayUrl}/sign#token=${verified.body.session.token}`);
    const envelopeId = verified.body.envelope as string;

    const exchanged = await call(stack.gatewayUrl, 'POST', '/v1/signing/exchange', { body: { token: verified.body.session.token } });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    const signed = await call(stack.gatewayUrl, 'POST', '/v1/signing/submit', { headers: bearer(exchanged.body.accessToken), body: { fields: { signature: { kind: 'typed', text: 'Ada Lovelace' } }, consent: true } });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    const completed = await until(() => call(stack.gatewayUrl, 'GET', `/v1/envelopes/${envelopeId}`, { headers: live }), (r) => r.body.status === 'completed');
    expect(completed.body).toMatchObject({ testMode: false, recipients: [{ email: visitor, delivery: 'embedded', status: 'completed' }] });
    const listed = await call(stack.gatewayUrl, 'GET', '/v1/signing-links', { headers: live });
    expect(listed.body.data.find((l: { id: string }) => l.id === linkId)).toMatchObject({ usage: { today: 1, total: 1 } });

    // The same address again: one start a day.
    const again = await call(stack.gatewayUrl, 'POST', `/v1/links/${linkId}/start`, { body: { name: 'Ada Lovelace', email: visitor } });
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    // Anyone else: the link's one envelope a day is used.
    const other = await call(stack.gatewayUrl, 'POST', `/v1/links/${linkId}/start`, { body: { name: 'Grace Hopper', email: `other.${visitor}` } });
    expect(other.status).toBe(429);
    expect(other.body.detail).toMatch(/at most 1 signer a day/);
  }, 90_000);

  it('stops answering once paused, and again once deleted', async () => {
    expect((await call(stack.gatewayUrl, 'PATCH', `/v1/signing-links/${linkId}`, { headers: live, body: { status: 'paused' } })).body.status).toBe('paused');
    const paused = await call(stack.gatewayUrl, 'POST', `/v1/links/${linkId}/start`, { body: { name: 'Grace Hopper', email: `third.${visitor}` } });
    expect(paused.status).toBe(409);
    expect(paused.body.type).toContain('link-paused');
    expect((await call(stack.gatewayUrl, 'DELETE', `/v1/signing-links/${linkId}`, { headers: live })).status).toBe(204);
    expect((await call(stack.gatewayUrl, 'GET', `/v1/links/${linkId}`)).status).toBe(404);
  });
});
