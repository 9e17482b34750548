import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createSchemaValidator, loadSigilOpenApi, validateEvent } from '@sigil/proto';
import { PASSWORD, createHarness, freshIp, sessionHeaders, sessionTokenOf, uniqueEmail, type Harness } from './helpers.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness('contract');
});
afterAll(async () => {
  await h?.close();
});

const validate = createSchemaValidator(loadSigilOpenApi());

describe('responses and events follow the contract', () => {
  it('bodies match their component schemas; every outbox event matches its event schema', async () => {
    const checks: Array<[string, unknown]> = [];
    const signUpRes = await request(h.app)
      .post('/v1/auth/sign-up')
      .set('x-forwarded-for', freshIp())
      .send({ organizationName: 'Contract', name: 'Carla', email: uniqueEmail('contract'), password: PASSWORD });
    checks.push(['Session', signUpRes.body]);
    const headers = await sessionHeaders(h, sessionTokenOf(signUpRes));

    checks.push(['Session', (await request(h.app).get('/v1/auth/session').set(headers)).body]);
    const key = await request(h.app).post('/v1/api-keys').set(headers).send({ name: 'k', mode: 'test', expiresInDays: 10 });
    checks.push(['ApiKeyCreated', key.body]);
    await request(h.app).delete(`/v1/api-keys/${key.body.id}`).set(headers).expect(204);
    checks.push(['ApiKeyList', (await request(h.app).get('/v1/api-keys').set(headers)).body]);

    const invitation = await request(h.app).post('/v1/organization/invitations').set(headers).send({ email: uniqueEmail('inv'), role: 'member' });
    checks.push(['InvitationCreated', invitation.body]);
    checks.push(['InvitationList', (await request(h.app).get('/v1/organization/invitations').set(headers)).body]);
    const accepted = await request(h.app)
      .post('/v1/auth/accept-invitation')
      .set('x-forwarded-for', freshIp())
      .send({ token: invitation.body.token, name: 'Mo', password: PASSWORD });
    checks.push(['Session', accepted.body]);
    const members = await request(h.app).get('/v1/organization/members').set(headers);
    checks.push(['MemberList', members.body]);
    const mo = members.body.data[1];
    checks.push(['Member', (await request(h.app).patch(`/v1/organization/members/${mo.id}`).set(headers).send({ role: 'viewer' })).body]);
    await request(h.app).delete(`/v1/organization/members/${mo.id}`).set(headers).expect(204);

    checks.push(['Problem', (await request(h.app).post('/v1/api-keys').set(headers).send({ name: 'x', mode: 'test', expiresInDays: 0 })).body]);
    checks.push(['Problem', (await request(h.app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email: uniqueEmail(), password: 'x' })).body]);
    checks.push(['Problem', (await request(h.app).delete('/v1/api-keys/key_000000000000000000000000').set(headers)).body]);
    await request(h.app).post('/v1/auth/sign-out').set(headers).expect(204);

    for (const [schema, body] of checks) expect({ schema, errors: validate(schema, body) }).toEqual({ schema, errors: [] });

    const all = await h.db.$queryRawUnsafe<{ subject: string; payload: { type: string } }[]>(`SELECT subject, payload FROM outbox_events`);
    // Besides events, the outbox holds the invitation's e-mail job: its id alone, never the token.
    const jobs = all.filter((r) => r.subject.startsWith('sigil.jobs.'));
    expect(jobs).toEqual([{ subject: 'sigil.jobs.accounts.invitation-mail', payload: { id: `invitation-mail-${invitation.body.id}`, invitationId: invitation.body.id } }]);
    const rows = all.filter((r) => !r.subject.startsWith('sigil.jobs.'));
    const types = new Set(rows.map((r) => r.payload.type));
    for (const type of ['organization.created', 'member.added', 'member.role_changed', 'member.removed', 'apikey.created', 'apikey.revoked', 'session.revoked']) {
      expect(types).toContain(type);
    }
    for (const row of rows) {
      expect(row.subject).toBe(`sigil.events.${row.payload.type}`);
      expect({ type: row.payload.type, result: validateEvent(row.payload) }).toEqual({ type: row.payload.type, result: { ok: true } });
    }
  });
});
