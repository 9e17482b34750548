import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { ROLE_PERMISSIONS, type Role } from '@sigil/kit/auth';
import { PASSWORD, authenticate, createHarness, freshIp, outbox, sessionHeaders, sessionTokenOf, sha256, signUp, uniqueEmail, type Harness, type SignedUp } from './helpers.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness('members');
});
afterAll(async () => {
  await h?.close();
});

interface Joined {
  memberId: string;
  userId: string;
  email: string;
  token: string;
  headers: Record<string, string>;
}

async function invite(owner: SignedUp, role: Role, email = uniqueEmail('invitee')) {
  const res = await request(h.app).post('/v1/organization/invitations').set(owner.headers).send({ email, role });
  expect(res.status).toBe(201);
  return res.body as { id: string; token: string; email: string };
}

async function join(owner: SignedUp, role: Role): Promise<Joined> {
  const invitation = await invite(owner, role);
  const res = await request(h.app)
    .post('/v1/auth/accept-invitation')
    .set('x-forwarded-for', freshIp())
    .send({ token: invitation.token, name: 'Invitee', password: PASSWORD });
  expect(res.status).toBe(201);
  const token = sessionTokenOf(res);
  const membership = await h.db.membership.findFirstOrThrow({ where: { organizationId: owner.organizationId, userId: res.body.user.id } });
  return { memberId: membership.id, userId: res.body.user.id, email: invitation.email, token, headers: await sessionHeaders(h, token) };
}

async function ownerMemberId(owner: SignedUp): Promise<string> {
  return (await h.db.membership.findFirstOrThrow({ where: { organizationId: owner.organizationId, userId: owner.userId } })).id;
}

describe('invitations', () => {
  it('creates an invitation whose token is shown once, stored as SHA-256, valid 7 days', async () => {
    const owner = await signUp(h);
    const email = uniqueEmail('Inv');
    const res = await request(h.app).post('/v1/organization/invitations').set(owner.headers).send({ email: email.toUpperCase(), role: 'admin' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ object: 'invitation', email: email.toLowerCase(), role: 'admin', acceptedAt: null });
    expect(res.body.id).toMatch(/^inv_/);
    expect(res.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const days = (new Date(res.body.expiresAt).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);
    const row = await h.db.invitation.findUniqueOrThrow({ where: { id: res.body.id } });
    expect(row.tokenHash).toBe(sha256(res.body.token));

    const list = await request(h.app).get('/v1/organization/invitations').set(owner.headers);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([expect.objectContaining({ id: res.body.id })]);
    expect(JSON.stringify(list.body)).not.toContain(res.body.token);
  });

  it('is 409 for an existing member or a pending invitation', async () => {
    const owner = await signUp(h);
    const self = await request(h.app).post('/v1/organization/invitations').set(owner.headers).send({ email: owner.email, role: 'member' });
    expect(self.status).toBe(409);
    const first = await invite(owner, 'member');
    const again = await request(h.app).post('/v1/organization/invitations').set(owner.headers).send({ email: first.email, role: 'viewer' });
    expect(again.status).toBe(409);
    // After revocation the address can be invited again.
    await request(h.app).delete(`/v1/organization/invitations/${first.id}`).set(owner.headers).expect(204);
    await request(h.app).delete(`/v1/organization/invitations/${first.id}`).set(owner.headers).expect(204);
    expect((await request(h.app).post('/v1/organization/invitations').set(owner.headers).send({ email: first.email, role: 'viewer' })).status).toBe(201);
  });

  it('keeps the invitation token only as a hash: no idempotent replay stores it', async () => {
    const owner = await signUp(h);
    const email = uniqueEmail('idem');
    const send = () => request(h.app).post('/v1/organization/invitations').set(owner.headers).set('Idempotency-Key', `inv-${email}`).send({ email, role: 'member' });
    const a = await send();
    const b = await send();
    expect(a.status).toBe(201);
    expect(b.status).toBe(409);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    const stored = await h.db.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM idempotency_keys WHERE response_body::text LIKE $1`, `%${a.body.token}%`);
    expect(stored).toEqual([]);
  });

  it('needs member:manage, and only owners invite owners', async () => {
    const owner = await signUp(h);
    const member = await join(owner, 'member');
    const denied = await request(h.app).post('/v1/organization/invitations').set(member.headers).send({ email: uniqueEmail(), role: 'member' });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toBe('Missing permission: member:manage.');
    const admin = await join(owner, 'admin');
    const ownerInvite = await request(h.app).post('/v1/organization/invitations').set(admin.headers).send({ email: uniqueEmail(), role: 'owner' });
    expect(ownerInvite.status).toBe(403);
    expect((await request(h.app).post('/v1/organization/invitations').set(admin.headers).send({ email: uniqueEmail(), role: 'member' })).status).toBe(201);
  });

  it('accepting creates the user and membership, signs in, and emits member.added', async () => {
    const owner = await signUp(h);
    const invitation = await invite(owner, 'viewer');
    const res = await request(h.app)
      .post('/v1/auth/accept-invitation')
      .set('x-forwarded-for', freshIp())
      .send({ token: invitation.token, name: 'Vera Viewer', password: PASSWORD });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ object: 'session', role: 'viewer', organization: { id: owner.organizationId }, user: { name: 'Vera Viewer', email: invitation.email } });
    expect(res.body.permissions).toEqual(ROLE_PERMISSIONS.viewer);
    expect(sessionTokenOf(res)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const events = await outbox(h, 'member.added', owner.organizationId);
    expect(events.at(-1)?.payload.data).toMatchObject({ userId: res.body.user.id, role: 'viewer', email: invitation.email });

    const again = await request(h.app).post('/v1/auth/accept-invitation').set('x-forwarded-for', freshIp()).send({ token: invitation.token, name: 'x', password: PASSWORD });
    expect(again.status).toBe(409);
    const list = await request(h.app).get('/v1/organization/invitations').set(owner.headers);
    expect(list.body.data.map((i: { id: string }) => i.id)).not.toContain(invitation.id);
    // An accepted invitation cannot be revoked.
    expect((await request(h.app).delete(`/v1/organization/invitations/${invitation.id}`).set(owner.headers)).status).toBe(404);
  });

  it('an existing account accepts with its own password', async () => {
    const owner = await signUp(h);
    const other = await signUp(h);
    const invitation = await invite(owner, 'member', other.email);
    const wrong = await request(h.app).post('/v1/auth/accept-invitation').set('x-forwarded-for', freshIp()).send({ token: invitation.token, name: 'x', password: 'a different password' });
    expect(wrong.status).toBe(409);
    const right = await request(h.app).post('/v1/auth/accept-invitation').set('x-forwarded-for', freshIp()).send({ token: invitation.token, name: 'x', password: PASSWORD });
    expect(right.status).toBe(201);
    expect(right.body.user.id).toBe(other.userId);
    expect(right.body.organization.id).toBe(owner.organizationId);
  });

  it('unknown, revoked and expired tokens are 404', async () => {
    const owner = await signUp(h);
    const accept = (token: string) =>
      request(h.app).post('/v1/auth/accept-invitation').set('x-forwarded-for', freshIp()).send({ token, name: 'x', password: PASSWORD });
    expect((await accept('no-such-token')).status).toBe(404);
    const revoked = await invite(owner, 'member');
    await request(h.app).delete(`/v1/organization/invitations/${revoked.id}`).set(owner.headers).expect(204);
    expect((await accept(revoked.token)).status).toBe(404);
    const expired = await invite(owner, 'member');
    await h.db.invitation.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await accept(expired.token)).status).toBe(404);
    // Another organization's invitation id is 404 on revoke.
    const other = await signUp(h);
    const theirs = await invite(other, 'member');
    expect((await request(h.app).delete(`/v1/organization/invitations/${theirs.id}`).set(owner.headers)).status).toBe(404);
  });
});

describe('members', () => {
  it('lists members oldest first with pagination; any member may', async () => {
    const owner = await signUp(h);
    const a = await join(owner, 'admin');
    const b = await join(owner, 'viewer');
    const first = await request(h.app).get('/v1/organization/members?limit=2').set(b.headers);
    expect(first.status).toBe(200);
    expect(first.body.data.map((m: { user: { id: string } }) => m.user.id)).toEqual([owner.userId, a.userId]);
    expect(first.body.data[0]).toMatchObject({ object: 'member', role: 'owner', permissions: ROLE_PERMISSIONS.owner, user: { object: 'user', email: owner.email } });
    const second = await request(h.app).get(`/v1/organization/members?limit=2&cursor=${first.body.nextCursor}`).set(b.headers);
    expect(second.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect(second.body.data.map((m: { id: string }) => m.id)).toEqual([b.memberId]);
  });

  it('changes roles and emits member.role_changed; only owners grant or remove owner', async () => {
    const owner = await signUp(h);
    const admin = await join(owner, 'admin');
    const member = await join(owner, 'member');
    const promote = await request(h.app).patch(`/v1/organization/members/${member.memberId}`).set(owner.headers).send({ role: 'admin' });
    expect(promote.status).toBe(200);
    expect(promote.body).toMatchObject({ id: member.memberId, role: 'admin', permissions: ROLE_PERMISSIONS.admin });
    const [event] = await outbox(h, 'member.role_changed', owner.organizationId);
    expect(event?.payload.data).toEqual({ memberId: member.memberId, userId: member.userId, previousRole: 'member', role: 'admin' });
    // The next look-up of that member's session carries the new role.
    const after = await authenticate(h, { type: 'session', tokenHash: sha256(member.token) });
    expect(after.principal?.role).toBe('admin');

    const byAdmin = await request(h.app).patch(`/v1/organization/members/${member.memberId}`).set(admin.headers).send({ role: 'owner' });
    expect(byAdmin.status).toBe(403);
    const demoteOwner = await request(h.app).patch(`/v1/organization/members/${await ownerMemberId(owner)}`).set(admin.headers).send({ role: 'member' });
    expect(demoteOwner.status).toBe(403);
    expect((await request(h.app).patch(`/v1/organization/members/${member.memberId}`).set(admin.headers).send({ role: 'viewer' })).status).toBe(200);
    expect((await request(h.app).patch(`/v1/organization/members/${member.memberId}`).set(owner.headers).send({ role: 'boss' })).status).toBe(400);
    expect((await request(h.app).patch('/v1/organization/members/mem_000000000000000000000000').set(owner.headers).send({ role: 'viewer' })).status).toBe(404);
  });

  it('never demotes or removes the last owner (409)', async () => {
    const owner = await signUp(h);
    const ownerId = await ownerMemberId(owner);
    const demote = await request(h.app).patch(`/v1/organization/members/${ownerId}`).set(owner.headers).send({ role: 'admin' });
    expect(demote.status).toBe(409);
    expect(demote.body.type).toBe('https://sigil.dev/problems/conflict');
    const remove = await request(h.app).delete(`/v1/organization/members/${ownerId}`).set(owner.headers);
    expect(remove.status).toBe(409);

    // With a second owner, the first can step down; then the second is the last one.
    const second = await join(owner, 'member');
    await request(h.app).patch(`/v1/organization/members/${second.memberId}`).set(owner.headers).send({ role: 'owner' }).expect(200);
    await request(h.app).patch(`/v1/organization/members/${ownerId}`).set(owner.headers).send({ role: 'admin' }).expect(200);
    const secondHeaders = await sessionHeaders(h, second.token);
    expect((await request(h.app).delete(`/v1/organization/members/${second.memberId}`).set(secondHeaders)).status).toBe(409);
  });

  it('concurrent demotions of the last two owners leave one owner', async () => {
    const owner = await signUp(h);
    const second = await join(owner, 'member');
    await request(h.app).patch(`/v1/organization/members/${second.memberId}`).set(owner.headers).send({ role: 'owner' }).expect(200);
    const secondHeaders = await sessionHeaders(h, second.token);
    const results = await Promise.all([
      request(h.app).patch(`/v1/organization/members/${await ownerMemberId(owner)}`).set(owner.headers).send({ role: 'admin' }),
      request(h.app).patch(`/v1/organization/members/${second.memberId}`).set(secondHeaders).send({ role: 'admin' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await h.db.membership.count({ where: { organizationId: owner.organizationId, role: 'owner' } })).toBe(1);
  });

  it('removing a member ends their sessions: member.removed and session.revoked', async () => {
    const owner = await signUp(h);
    const member = await join(owner, 'member');
    const res = await request(h.app).delete(`/v1/organization/members/${member.memberId}`).set(owner.headers);
    expect(res.status).toBe(204);
    expect(await authenticate(h, { type: 'session', tokenHash: sha256(member.token) })).toEqual({ principal: null, reason: 'revoked' });
    const removed = await outbox(h, 'member.removed', owner.organizationId);
    expect(removed.map((e) => e.payload.data)).toEqual([{ memberId: member.memberId, userId: member.userId }]);
    const revoked = await outbox(h, 'session.revoked', owner.organizationId);
    expect(revoked.map((e) => e.payload.data)).toContainEqual({ sessionHash: sha256(member.token) });
    expect((await request(h.app).delete(`/v1/organization/members/${member.memberId}`).set(owner.headers)).status).toBe(404);
    // Listing needs no permission, but updates do.
    const viewer = await join(owner, 'viewer');
    expect((await request(h.app).get('/v1/organization/members').set(viewer.headers)).status).toBe(200);
    expect((await request(h.app).delete(`/v1/organization/members/${await ownerMemberId(owner)}`).set(viewer.headers)).status).toBe(403);
  });

  it('who removes whom (what the dashboard offers): admins remove non-owners and themselves, owners anyone but the last owner, members and viewers no one', async () => {
    const owner = await signUp(h);
    const admin = await join(owner, 'admin');
    const otherAdmin = await join(owner, 'admin');
    const member = await join(owner, 'member');
    const ownerId = await ownerMemberId(owner);
    const remove = (id: string, headers: Record<string, string>) => request(h.app).delete(`/v1/organization/members/${id}`).set(headers);

    const adminOnOwner = await remove(ownerId, admin.headers);
    expect(adminOnOwner.status).toBe(403);
    expect(adminOnOwner.body.detail).toBe('Only an owner can remove an owner.');
    // Members and viewers cannot even leave: removal needs member:manage.
    expect((await remove(member.memberId, member.headers)).status).toBe(403);
    expect((await remove(otherAdmin.memberId, admin.headers)).status).toBe(204);
    expect((await remove(admin.memberId, admin.headers)).status).toBe(204);
    expect(await authenticate(h, { type: 'session', tokenHash: sha256(admin.token) })).toEqual({ principal: null, reason: 'revoked' });

    const lastOwner = await remove(ownerId, owner.headers);
    expect(lastOwner.status).toBe(409);
    expect(lastOwner.body.detail).toBe('The last owner cannot be removed; make another member an owner first.');
    await request(h.app).patch(`/v1/organization/members/${member.memberId}`).set(owner.headers).send({ role: 'owner' }).expect(200);
    expect((await remove(ownerId, owner.headers)).status).toBe(204);
  });

  it("cannot touch another organization's members", async () => {
    const owner = await signUp(h);
    const other = await signUp(h);
    const theirs = await ownerMemberId(other);
    expect((await request(h.app).patch(`/v1/organization/members/${theirs}`).set(owner.headers).send({ role: 'viewer' })).status).toBe(404);
    expect((await request(h.app).delete(`/v1/organization/members/${theirs}`).set(owner.headers)).status).toBe(404);
  });
});
