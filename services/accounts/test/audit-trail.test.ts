// GET /v1/sso/audit: the organization's SSO and SCIM trail, newest first, paged, for members with sso:manage only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { recordSsoAudit } from '../src/sso/audit.ts';
import { createHarness, signUp, type Harness, type SignedUp } from './helpers.ts';

let h: Harness;
let owner: SignedUp;
let stranger: SignedUp;
beforeAll(async () => {
  h = await createHarness('audit_trail');
  owner = await signUp(h);
  stranger = await signUp(h);
  const base = Date.parse('2026-11-20T10:00:00.000Z');
  for (let i = 0; i < 5; i += 1) {
    await recordSsoAudit(h.db, {
      organizationId: owner.organizationId,
      action: i % 2 ? 'sso.sign_in_failed' : 'sso.sign_in',
      actor: { type: 'sso' },
      subject: `person${i}@acme.test`,
      providerId: 'okta',
      outcome: i % 2 ? 'failure' : 'success',
      reason: i % 2 ? 'The assertion is not signed.' : null,
      at: new Date(base + i * 60_000),
    });
  }
  await recordSsoAudit(h.db, { organizationId: stranger.organizationId, action: 'scim.token_created', actor: { type: 'member', id: stranger.userId } });
});
afterAll(async () => h?.close());

const trail = (headers: Record<string, string>, query = '') => request(h.app).get(`/v1/sso/audit${query}`).set(headers);

describe('GET /v1/sso/audit', () => {
  it('lists the organization’s entries newest first, in pages, and nothing of another organization', async () => {
    const first = await trail(owner.headers, '?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: 'list', hasMore: true });
    expect(first.body.data.map((e: { subject: string }) => e.subject)).toEqual(['person4@acme.test', 'person3@acme.test']);
    expect(first.body.data[1]).toMatchObject({
      object: 'sso_audit_event',
      action: 'sso.sign_in_failed',
      actor: { type: 'sso', id: null },
      providerId: 'okta',
      outcome: 'failure',
      reason: 'The assertion is not signed.',
      createdAt: '2026-11-20T10:03:00.000Z',
    });

    const rest = await trail(owner.headers, `?limit=10&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(rest.body.data.map((e: { subject: string }) => e.subject)).toEqual(['person2@acme.test', 'person1@acme.test', 'person0@acme.test']);
    expect(rest.body).toMatchObject({ hasMore: false, nextCursor: null });

    const theirs = await trail(stranger.headers);
    expect(theirs.body.data.map((e: { action: string }) => e.action)).toEqual(['scim.token_created']);
  });

  it('refuses a malformed cursor beside the field', async () => {
    const res = await trail(owner.headers, '?cursor=nonsense');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/query/cursor' })]);
  });

  it('needs sso:manage', async () => {
    const member = await h.auth.headers({ kind: 'session', organizationId: owner.organizationId, actorId: 'usr_member', userId: 'usr_member', role: 'member', mode: 'live', permissions: ['envelope:read'] });
    const res = await trail(member);
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('sso:manage');
  });
});
