import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, sessionPrincipal } from '@sigil/kit/testing';
import { sampleVersion, startEnvelopesHarness, type EnvelopesHarness } from './helpers.ts';

// What the dashboard reads of viewers and signing links through GraphQL: the same use cases as the REST operations.
let h: EnvelopesHarness;
const org = apiKeyPrincipal({ permissions: ['envelope:read', 'envelope:send'] });
const templateId = newId('tpl');

beforeAll(async () => {
  h = await startEnvelopesHarness('subgraph_links');
  h.templates.publish(org.organizationId, sampleVersion(templateId));
}, 60_000);
afterAll(async () => h?.close());

const gql = async (query: string, variables: object = {}, principal = org) => request(h.app).post('/graphql').set(await h.auth.headers(principal)).send({ query, variables });
const rest = async (principal = org) => h.auth.headers(principal);

describe('Envelope.viewers', () => {
  it('lists the viewers, revoked ones too, with when each first opened', async () => {
    const created = await request(h.app).post('/v1/envelopes').set(await rest()).send({
      template: templateId,
      recipients: [{ role: 'client', name: 'Ada', email: 'ada@example.com' }, { role: 'counsel', name: 'Grace', email: 'grace@example.com' }],
      variables: { company: 'Acme' },
      viewers: [{ email: 'boss@example.com', name: 'The Boss', documentAccess: true }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    h.clock.now = new Date(h.clock.now.getTime() + 1000);
    const added = await request(h.app).post(`/v1/envelopes/${created.body.id}/viewers`).set(await rest()).send({ viewers: [{ email: 'audit@example.com' }] });
    expect(added.status).toBe(201);
    const revoked = await request(h.app).delete(`/v1/envelopes/${created.body.id}/viewers/${added.body.data[0].id}`).set(await rest());
    expect(revoked.status).toBe(204);

    const res = await gql('query($id: ID!) { envelope(id: $id) { viewers { id email name documentAccess createdAt firstOpenedAt revokedAt } } }', { id: created.body.id });
    expect(res.body.errors).toBeUndefined();
    const viewers = res.body.data.envelope.viewers;
    expect(viewers.map((v: { email: string; name: string | null; documentAccess: boolean; firstOpenedAt: string | null }) => [v.email, v.name, v.documentAccess, v.firstOpenedAt])).toEqual([
      ['boss@example.com', 'The Boss', true, null],
      ['audit@example.com', null, false, null],
    ]);
    expect(viewers[0].revokedAt).toBeNull();
    expect(Date.parse(viewers[1].revokedAt)).not.toBeNaN();
    expect(viewers[1].id).toBe(added.body.data[0].id);
  });
});

describe('signingLinks', () => {
  const LINK_FIELDS = 'id url status testMode version role title template { id } limits { perEmailPerDay perIpPerHour dailyCap } usage { today total } createdAt';
  let linkId: string;

  beforeAll(async () => {
    const res = await request(h.app).post('/v1/signing-links').set(await rest()).send({
      template: templateId,
      role: 'client',
      title: 'Client onboarding',
      limits: { dailyCap: 50 },
      recipients: [{ role: 'counsel', name: 'Grace', email: 'grace@example.com' }],
      variables: { company: 'Acme' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    linkId = res.body.id;
  });

  it('lists the mode’s links with their template, limits and usage, and reads one', async () => {
    const res = await gql(`{ signingLinks(first: 10) { nodes { ${LINK_FIELDS} } hasMore nextCursor } }`);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.signingLinks).toMatchObject({
      nodes: [{
        id: linkId, url: `/l/${linkId}`, status: 'active', testMode: true, version: 1, role: 'client', title: 'Client onboarding',
        template: { id: templateId }, limits: { perEmailPerDay: 3, perIpPerHour: 20, dailyCap: 50 }, usage: { today: 0, total: 0 },
      }],
      hasMore: false,
      nextCursor: null,
    });
    const one = await gql(`query($id: ID!) { signingLink(id: $id) { ${LINK_FIELDS} } }`, { id: linkId });
    expect(one.body.data.signingLink).toEqual(res.body.data.signingLinks.nodes[0]);
  });

  it('follows a pause, and shows nothing of another mode, another organization, a deleted link or a malformed id', async () => {
    await request(h.app).patch(`/v1/signing-links/${linkId}`).set(await rest()).send({ status: 'paused' });
    expect((await gql('query($id: ID!) { signingLink(id: $id) { status } }', { id: linkId })).body.data.signingLink).toEqual({ status: 'paused' });

    const liveSession = sessionPrincipal({ organizationId: org.organizationId, mode: 'live' });
    expect((await gql('{ signingLinks { nodes { id } } }', {}, liveSession)).body.data.signingLinks.nodes).toEqual([]);
    expect((await gql('query($id: ID!) { signingLink(id: $id) { id } }', { id: linkId }, liveSession)).body.data.signingLink).toBeNull();
    expect((await gql('query($id: ID!) { signingLink(id: $id) { id } }', { id: linkId }, apiKeyPrincipal())).body.data.signingLink).toBeNull();
    expect((await gql('query($id: ID!) { signingLink(id: $id) { id } }', { id: 'lnk_nope' })).body.data.signingLink).toBeNull();

    await request(h.app).delete(`/v1/signing-links/${linkId}`).set(await rest());
    expect((await gql('query($id: ID!) { signingLink(id: $id) { id } }', { id: linkId })).body.data.signingLink).toBeNull();
    expect((await gql('{ signingLinks { nodes { id } } }')).body.data.signingLinks.nodes).toEqual([]);
  });

  it('refuses a page size out of bounds and a caller without envelope:read', async () => {
    expect((await gql('{ signingLinks(first: 0) { nodes { id } } }')).body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const forbidden = await gql('{ signingLinks { nodes { id } } }', {}, apiKeyPrincipal({ organizationId: org.organizationId, permissions: ['template:read'] }));
    expect(forbidden.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });
});
