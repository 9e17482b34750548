import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal } from '@sigil/kit/testing';
import { sampleVersion, startEnvelopesHarness, type EnvelopesHarness } from './helpers.ts';

let h: EnvelopesHarness;
const org = apiKeyPrincipal({ permissions: ['envelope:read', 'envelope:send'] });
const templateId = newId('tpl');
let envelopeId: string;

beforeAll(async () => {
  h = await startEnvelopesHarness('subgraph');
  h.templates.publish(org.organizationId, sampleVersion(templateId));
  const res = await request(h.app).post('/v1/envelopes').set(await h.auth.headers(org)).send({
    template: templateId,
    recipients: [{ role: 'client', name: 'Ada', email: 'ada@example.com' }, { role: 'counsel', name: 'Grace', email: 'grace@example.com' }],
    variables: { company: 'Acme' },
    externalId: 'graph-1',
  });
  envelopeId = res.body.id;
}, 60_000);
afterAll(async () => h?.close());

const gql = async (query: string, variables: object = {}, principal = org) => request(h.app).post('/graphql').set(await h.auth.headers(principal)).send({ query, variables });

describe('envelopes subgraph', () => {
  it('lists and reads envelopes with their recipients and a reference to their template', async () => {
    const res = await gql('{ envelopes(first: 5) { nodes { id status testMode externalId template { id } recipients { role email order status } } hasMore } }');
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.envelopes).toEqual({
      nodes: [{
        id: envelopeId, status: 'rendering', testMode: true, externalId: 'graph-1', template: { id: templateId },
        recipients: [{ role: 'client', email: 'ada@example.com', order: 1, status: 'pending' }, { role: 'counsel', email: 'grace@example.com', order: 2, status: 'pending' }],
      }],
      hasMore: false,
    });
    expect((await gql('query($id: ID!) { envelope(id: $id) { id } }', { id: envelopeId })).body.data.envelope).toEqual({ id: envelopeId });
  });

  it('resolves Envelope entities, and nothing of another organization or mode', async () => {
    const res = await gql('query($r: [_Any!]!) { _entities(representations: $r) { ... on Envelope { id status } } }', { r: [{ __typename: 'Envelope', id: envelopeId }] });
    expect(res.body.data._entities).toEqual([{ id: envelopeId, status: 'rendering' }]);
    const live = apiKeyPrincipal({ organizationId: org.organizationId, mode: 'live', permissions: ['envelope:read'] });
    expect((await gql('query($id: ID!) { envelope(id: $id) { id } }', { id: envelopeId }, live)).body.data.envelope).toBeNull();
    expect((await gql('query($id: ID!) { envelope(id: $id) { id } }', { id: envelopeId }, apiKeyPrincipal())).body.data.envelope).toBeNull();
  });

  it('refuses a bad status filter and a caller without envelope:read', async () => {
    const bad = await gql('{ envelopes(status: "purple") { nodes { id } } }');
    expect(bad.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const forbidden = await gql('{ envelopes { nodes { id } } }', {}, apiKeyPrincipal({ organizationId: org.organizationId, permissions: ['template:read'] }));
    expect(forbidden.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });
});
