import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { apiKeyPrincipal, sessionPrincipal } from '@sigil/kit/testing';
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

  describe('filters, counts and turns for the dashboard', () => {
    const owner = sessionPrincipal({ organizationId: org.organizationId });
    const ids: Record<string, string> = {};
    const send = async (externalId: string, mode: 'test' | 'live') => {
      const res = await request(h.app).post(`/v1/envelopes${mode === 'test' ? '?test_mode=1' : ''}`).set(await h.auth.headers(owner)).send({
        template: templateId,
        recipients: [{ role: 'client', name: 'Lin', email: `${externalId}@example.com` }, { role: 'counsel', name: 'Mo', email: 'mo@example.com' }],
        variables: { company: 'Acme' },
        externalId,
      });
      expect(res.status).toBe(201);
      ids[externalId] = res.body.id;
      return res.body.id as string;
    };
    const ago = (days: number) => new Date(Date.now() - days * 86_400_000);

    beforeAll(async () => {
      // waiting-old: its first signer's turn began 5 days ago; waiting-new: an hour ago; sealed-one: completed and sealed.
      await h.db.envelope.update({ where: { id: await send('waiting-old', 'test') }, data: { status: 'sent' } });
      await h.db.recipient.updateMany({ where: { envelopeId: ids['waiting-old'], role: 'client' }, data: { status: 'viewed', sentAt: ago(5) } });
      await h.db.envelope.update({ where: { id: await send('waiting-new', 'test') }, data: { status: 'sent' } });
      await h.db.recipient.updateMany({ where: { envelopeId: ids['waiting-new'], role: 'client' }, data: { status: 'sent', sentAt: ago(1 / 24) } });
      await h.db.envelope.update({ where: { id: await send('sealed-one', 'test') }, data: { status: 'completed', seal: 'sealed' } });
      await send('live-one', 'live');
      await h.db.envelope.update({ where: { id: ids['live-one'] }, data: { createdAt: ago(40) } });
    });

    const ext = (res: request.Response) => (res.body.data.envelopes.nodes as Array<{ externalId: string }>).map((n) => n.externalId);

    it('lists a session its own mode by default, or the mode it names', async () => {
      expect(ext(await gql('{ envelopes(first: 10) { nodes { externalId } } }', {}, owner))).toEqual(['live-one']);
      expect(ext(await gql('{ envelopes(first: 10, testMode: true) { nodes { externalId } } }', {}, owner))).toEqual(['sealed-one', 'waiting-new', 'waiting-old', 'graph-1']);
      expect(ext(await gql('{ envelopes(first: 10) { nodes { externalId } } }', {}, { ...owner, mode: 'test' }))).toEqual(['sealed-one', 'waiting-new', 'waiting-old', 'graph-1']);
    });

    it('filters by seal, template and search, and pages with cursors', async () => {
      expect(ext(await gql('{ envelopes(seal: "sealed") { nodes { externalId } } }'))).toEqual(['sealed-one']);
      expect(ext(await gql('query($t: ID) { envelopes(template: $t, q: "WAITING-OLD@") { nodes { externalId } } }', { t: templateId }))).toEqual(['waiting-old']);
      expect(ext(await gql('{ envelopes(template: "tpl_someOtherTemplate1") { nodes { externalId } } }'))).toEqual([]);
      const first = (await gql('{ envelopes(first: 3) { nodes { externalId } hasMore nextCursor } }')).body.data.envelopes;
      expect(first.hasMore).toBe(true);
      const second = await gql('query($after: String) { envelopes(first: 3, after: $after) { nodes { externalId } hasMore nextCursor } }', { after: first.nextCursor });
      expect(ext(second)).toEqual(['graph-1']);
      expect(second.body.data.envelopes).toMatchObject({ hasMore: false, nextCursor: null });
      expect((await gql('{ envelopes(seal: "shiny") { nodes { id } } }')).body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    });

    it('finds the envelopes waiting on someone since before a moment', async () => {
      const query = 'query($since: String) { envelopes(waitingSince: $since) { nodes { externalId recipients { role hasTurn } } } }';
      const res = await gql(query, { since: ago(3).toISOString() });
      expect(res.body.data.envelopes.nodes).toEqual([{ externalId: 'waiting-old', recipients: [{ role: 'client', hasTurn: true }, { role: 'counsel', hasTurn: false }] }]);
      expect(ext(await gql(query, { since: new Date().toISOString() }))).toEqual(['waiting-new', 'waiting-old']);
      expect((await gql(query, { since: 'last tuesday' })).body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    });

    it('counts envelopes per status since a moment, in SQL, every status listed', async () => {
      const counts = async (since: Date, principal = owner, testMode?: boolean) => {
        const res = await gql('query($since: String!, $t: Boolean) { envelopeCounts(since: $since, testMode: $t) { status count } }', { since: since.toISOString(), t: testMode }, principal);
        expect(res.body.errors).toBeUndefined();
        return Object.fromEntries((res.body.data.envelopeCounts as Array<{ status: string; count: number }>).map((c) => [c.status, c.count]));
      };
      expect(await counts(ago(1), owner, true)).toEqual({ rendering: 1, sent: 2, completed: 1, declined: 0, voided: 0, expired: 0 });
      expect(await counts(ago(1), owner)).toEqual({ rendering: 0, sent: 0, completed: 0, declined: 0, voided: 0, expired: 0 });
      expect((await counts(ago(60), owner)).rendering).toBe(1);
      expect((await counts(ago(1), apiKeyPrincipal())).sent).toBe(0);
    });
  });
});
