import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { startLocalIdp, type LocalIdp } from '@sigil/local-idp';
import { freshIp, PASSWORD, type Harness, type SignedUp } from './helpers.ts';
import { createSsoHarness, freshDomain, ownerOn, putConnection } from './sso-helpers.ts';

let h: Harness;
let idp: LocalIdp;
let owner: SignedUp;
let domain: string;

beforeAll(async () => {
  idp = await startLocalIdp();
  h = await createSsoHarness('sso_enforcement');
  domain = freshDomain('enf');
  owner = await ownerOn(h, 'business', `owner@${domain}`);
  await putConnection(h, owner.headers, 'corp', { protocol: 'saml', metadataXml: idp.saml.metadataXml, domains: [domain] }).expect(200);
});
afterAll(async () => {
  await h?.close();
  await idp?.close();
});

async function invite(email: string, role = 'member'): Promise<void> {
  const invitation = await request(h.app).post('/v1/organization/invitations').set(owner.headers).send({ email, role });
  expect(invitation.status).toBe(201);
  const accepted = await request(h.app).post('/v1/auth/accept-invitation').set('x-forwarded-for', freshIp()).send({ token: invitation.body.token, name: 'Member', password: PASSWORD });
  expect(accepted.status).toBe(201);
}

const passwordSignIn = (email: string, password = PASSWORD) => request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email, password });

async function breakGlassEntries() {
  return h.db.ssoAuditEvent.findMany({ where: { organizationId: owner.organizationId, action: 'sso.break_glass_sign_in' } });
}

describe('enforced SSO and password sign-in', () => {
  it('lets members sign in with a password while SSO is not enforced', async () => {
    const email = `before@${domain}`;
    await invite(email);
    expect((await passwordSignIn(email)).status).toBe(200);
  });

  it('refuses a member of the domain once enforced (403, after the password was checked), keeps others and audits owners', async () => {
    const member = `member@${domain}`;
    const outsider = `contractor@${freshDomain('outside')}`;
    await invite(member);
    await invite(outsider);
    await putConnection(h, owner.headers, 'corp', { enforced: true }).expect(200);

    const refused = await passwordSignIn(member);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ type: 'https://sigil.dev/problems/forbidden', sso: true, providerId: 'corp' });
    expect(refused.body.detail).toMatch(/^This organization signs in with single sign-on/);
    expect(refused.headers['set-cookie']).toBeUndefined();
    // A wrong password stays the same 401 as ever: the refusal tells nothing to someone who does not know it.
    expect((await passwordSignIn(member, 'wrong password')).status).toBe(401);
    // Addresses of other domains are not concerned.
    expect((await passwordSignIn(outsider)).status).toBe(200);

    expect(await breakGlassEntries()).toHaveLength(0);
    const glass = await passwordSignIn(owner.email);
    expect(glass.status).toBe(200);
    const entries = await breakGlassEntries();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ subject: owner.email, providerId: 'corp', actorType: 'member', actorId: owner.userId });

    await putConnection(h, owner.headers, 'corp', { enforced: false }).expect(200);
    expect((await passwordSignIn(member)).status).toBe(200);
  });
});
