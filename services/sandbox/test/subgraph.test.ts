import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createStrataTestAuth, strataPrincipal, type StrataTestAuth } from '@sigil/kit/testing';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { CatalogClient } from '../src/catalog-client.ts';
import { startSandboxHarness, type SandboxHarness } from './testing.ts';

const NAME = 'postgres-main-sbx-graph';

/** The subgraph never asks the catalog: its Backup and Target are references the catalog's subgraph resolves. */
const unusedCatalog: CatalogClient = {
  prepare: () => Promise.reject(new Error('the catalog is not part of this test')),
  start: () => Promise.reject(new Error('the catalog is not part of this test')),
  fail: () => Promise.reject(new Error('the catalog is not part of this test')),
};

let auth: StrataTestAuth;
let h: SandboxHarness;

beforeAll(async () => {
  auth = await createStrataTestAuth();
  h = await startSandboxHarness({ name: 'graph', auth, catalog: unusedCatalog, cell: `t${randomBytes(4).toString('hex')}` });
  await h.db.sandbox.create({
    data: {
      id: 'sbx_graph1', namespace: 'default', name: NAME, engine: 'postgres', phase: 'Ready', message: 'ready', owner: 'ada@example.test',
      targetNamespace: 'default', targetName: 'postgres-main', backupId: 'bk-graph-1', restoreName: 'postgres-main-restore-1',
      databases: ['app', 'audit'], database: 'app', host: '127.0.0.1', port: 45432, sizeLimitBytes: 2n * 1024n ** 3n, usedBytes: 4096n,
      ttlSeconds: 3600, maxTtlSeconds: 21600, expiresAt: new Date('2026-11-20T04:00:00Z'), createdAt: new Date('2026-11-20T03:00:00Z'),
      readyAt: new Date('2026-11-20T03:01:00Z'), dataTime: new Date('2026-11-20T02:59:00Z'), masks: [], postRestoreSql: [],
    },
  });
  await h.db.sandbox.create({
    data: {
      id: 'sbx_graph2', namespace: 'default', name: 'gone-sbx', engine: 'postgres', phase: 'Deleted', targetNamespace: 'default', targetName: 'postgres-main',
      databases: [], sizeLimitBytes: 0n, ttlSeconds: 60, maxTtlSeconds: 60, expiresAt: new Date('2026-11-19T00:00:00Z'), masks: [], postRestoreSql: [],
    },
  });
});
afterAll(async () => h?.close());

async function graph(principal: StrataPrincipal | undefined, query: string, variables: Record<string, unknown> = {}) {
  const headers = principal ? await auth.headers(principal) : {};
  const res = await request(h.app).post('/graphql').set(headers).send({ query, variables });
  expect(res.status).toBe(200);
  return res.body as { data?: Record<string, unknown> | null; errors?: Array<{ message: string; extensions: { code: string } }> };
}

describe('sandbox subgraph', () => {
  it('lists living sandboxes with their backup and target as references', async () => {
    const body = await graph(
      strataPrincipal('viewer'),
      '{ strataSandboxes { name namespace phase engine database databases host port inCluster sizeLimit usedBytes expires ready time owner restore backup { id } target { namespace name } } }',
    );
    expect(body.errors).toBeUndefined();
    expect(body.data?.strataSandboxes).toEqual([
      {
        name: NAME, namespace: 'default', phase: 'Ready', engine: 'postgres', database: 'app', databases: ['app', 'audit'], host: '127.0.0.1', port: 45432,
        inCluster: '127.0.0.1:45432', sizeLimit: '2Gi', usedBytes: 4096, expires: '2026-11-20T04:00:00.000Z', ready: '2026-11-20T03:01:00.000Z',
        time: '2026-11-20T02:59:00.000Z', owner: 'ada@example.test', restore: 'postgres-main-restore-1',
        backup: { id: 'bk-graph-1' }, target: { namespace: 'default', name: 'postgres-main' },
      },
    ]);
  });

  it('reads one sandbox, and null for a deleted or unknown one', async () => {
    const body = await graph(strataPrincipal('viewer'), `{ strataSandbox(name: "${NAME}") { name phase } gone: strataSandbox(name: "gone-sbx") { name } unknown: strataSandbox(name: "nope") { name } }`);
    expect(body.data).toEqual({ strataSandbox: { name: NAME, phase: 'Ready' }, gone: null, unknown: null });
  });

  it('resolves Sandbox references', async () => {
    const body = await graph(strataPrincipal('viewer'), 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Sandbox { name backup { id } } } }', {
      r: [{ __typename: 'Sandbox', name: NAME }, { __typename: 'Sandbox', name: 'nope' }],
    });
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities).toEqual([{ name: NAME, backup: { id: 'bk-graph-1' } }, null]);
  });

  it('answers UNAUTHENTICATED without a principal', async () => {
    const body = await graph(undefined, '{ strataSandboxes { name } }');
    expect(body.data).toBeNull();
    expect(body.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    const entities = await graph(undefined, 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Sandbox { name } } }', { r: [{ __typename: 'Sandbox', name: NAME }] });
    expect(entities.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });
});
