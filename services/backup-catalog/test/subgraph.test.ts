import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { strataPrincipal } from '@sigil/kit/testing';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { startCatalogHarness, generateAgeIdentity, type CatalogHarness } from './helpers.ts';
import { stackDocuments } from './fixtures.ts';

const BACKUP_ID = 'bk-graph-1';
const RESTORE = { namespace: 'default', name: 'postgres-main-restore-graph' };
const VIEWER = strataPrincipal('viewer');
const OTHER_ORG = strataPrincipal('viewer', { orgs: ['other'] });
const ACME = strataPrincipal('viewer', { orgs: ['acme'] });

let h: CatalogHarness;

beforeAll(async () => {
  h = await startCatalogHarness('graph');
  const { recipient } = await generateAgeIdentity();
  const docs = stackDocuments({ bucket: 'strata-graph-test', recipients: [recipient], postgres: { host: '127.0.0.1', port: 5432, username: 'postgres' } });
  expect((await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml')).status).toBe(200);
  const completed = new Date('2026-11-20T03:05:00Z');
  await h.runtime.db.backup.create({
    data: {
      id: BACKUP_ID, namespace: 'default', name: 'postgres-main-graph', targetName: 'postgres-main', store: 'local', policy: 'nightly', engine: 'postgres',
      phase: 'Succeeded', reason: 'scheduled', queuedAt: new Date('2026-11-20T03:00:00Z'), startedAt: new Date('2026-11-20T03:00:01Z'), completedAt: completed,
      rawBytes: 5_000_000_000n, storedBytes: 1_200_000n, manifest: { databases: ['app'], mode: 'logical', consistentAt: completed.toISOString() },
    },
  });
  await h.runtime.db.restore.create({
    data: { id: 'rs-graph-1', ...RESTORE, targetNamespace: 'default', targetName: 'postgres-main', backupId: BACKUP_ID, mode: 'download', phase: 'Succeeded', message: 'ready' },
  });
});
afterAll(async () => h?.close());

async function graph(principal: StrataPrincipal | undefined, query: string, variables: Record<string, unknown> = {}) {
  const headers = principal ? await h.auth.headers(principal) : {};
  const res = await request(h.app).post('/graphql').set(headers).send({ query, variables });
  expect(res.status).toBe(200);
  return res.body as { data?: Record<string, unknown>; errors?: Array<{ message: string; path?: string[]; extensions: { code: string } }> };
}

const ENTITIES = `query($r: [_Any!]!) { _entities(representations: $r) {
  ... on Target { name org health }
  ... on Backup { id target { name } }
  ... on Restore { name phase target { name } backup { id } }
} }`;

describe('queries', () => {
  it('lists the targets with their health, last backup and runs', async () => {
    const body = await graph(VIEWER, '{ strataTargets { namespace name engine org health backupCount storedBytes lastBackup { id } backups(limit: 5) { id phase rawBytes databases target { name } } } }');
    expect(body.errors).toBeUndefined();
    expect(body.data?.strataTargets).toEqual([
      {
        namespace: 'default', name: 'postgres-main', engine: 'postgres', org: 'acme', health: expect.any(String), backupCount: 1, storedBytes: 1_200_000,
        lastBackup: { id: BACKUP_ID },
        backups: [{ id: BACKUP_ID, phase: 'Succeeded', rawBytes: 5_000_000_000, databases: ['app'], target: { name: 'postgres-main' } }],
      },
    ]);
  });

  it('filters targets like the console API', async () => {
    const body = await graph(VIEWER, '{ none: strataTargets(env: "prod") { name } test: strataTargets(env: "test", q: "postgres") { name } }');
    expect(body.data).toEqual({ none: [], test: [{ name: 'postgres-main' }] });
  });

  it('reads one target, backup and restore, and null for what does not exist', async () => {
    const body = await graph(
      VIEWER,
      `query($id: ID!) {
        strataTarget(namespace: "default", name: "postgres-main") { name policy store }
        missing: strataTarget(namespace: "default", name: "nope") { name }
        strataBackup(id: $id) { id namespace mode completed target { name org } }
        noBackup: strataBackup(id: "bk-nope") { id }
        strataRestores(limit: 10) { name mode target { name } backup { id } }
        strataRestore(namespace: "default", name: "${RESTORE.name}") { name phase message }
      }`,
      { id: BACKUP_ID },
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      strataTarget: { name: 'postgres-main', policy: 'nightly', store: 'local' },
      missing: null,
      strataBackup: { id: BACKUP_ID, namespace: 'default', mode: 'logical', completed: '2026-11-20T03:05:00.000Z', target: { name: 'postgres-main', org: 'acme' } },
      noBackup: null,
      strataRestores: [{ name: RESTORE.name, mode: 'download', target: { name: 'postgres-main' }, backup: { id: BACKUP_ID } }],
      strataRestore: { name: RESTORE.name, phase: 'Succeeded', message: 'ready' },
    });
  });

  it("carries retention's and the load guard's fields, like the console API", async () => {
    const expired = { id: 'bk-graph-expired', namespace: 'default', name: 'postgres-main-graph-expired', targetName: 'postgres-main', store: 'local', policy: 'nightly', engine: 'postgres' };
    await h.runtime.db.backup.create({
      data: { ...expired, phase: 'Expired', queuedAt: new Date('2026-11-19T03:00:00Z'), completedAt: new Date('2026-11-19T03:05:00Z'), expiredAt: new Date('2026-11-20T03:06:00Z'), expiredReason: 'kept by no rule of retain {daily: 1}', postpones: 2 },
    });
    await h.runtime.db.backup.update({ where: { id: BACKUP_ID }, data: { retainedBy: ['newest', 'daily'], expiresAt: new Date('2026-11-21T00:00:00Z') } });
    const fields = 'phase restorable retainedBy expiresAt expiredAt expiredReason postpones postponedUntil';
    const body = await graph(VIEWER, `{ kept: strataBackup(id: "${BACKUP_ID}") { ${fields} } gone: strataBackup(id: "${expired.id}") { ${fields} } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      kept: { phase: 'Succeeded', restorable: true, retainedBy: ['newest', 'daily'], expiresAt: '2026-11-21T00:00:00.000Z', expiredAt: null, expiredReason: null, postpones: 0, postponedUntil: null },
      gone: { phase: 'Expired', restorable: false, retainedBy: [], expiresAt: null, expiredAt: '2026-11-20T03:06:00.000Z', expiredReason: 'kept by no rule of retain {daily: 1}', postpones: 2, postponedUntil: null },
    });
    await h.runtime.db.backup.delete({ where: { id: expired.id } });
  });

  it('refuses a limit outside 1 to 1000', async () => {
    const body = await graph(VIEWER, '{ strataRestores(limit: 0) { name } }');
    expect(body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });
});

describe('entities', () => {
  it('resolves Target, Backup and Restore references', async () => {
    const body = await graph(VIEWER, ENTITIES, {
      r: [
        { __typename: 'Target', namespace: 'default', name: 'postgres-main' },
        { __typename: 'Backup', id: BACKUP_ID },
        { __typename: 'Restore', ...RESTORE },
        { __typename: 'Backup', id: 'bk-nope' },
      ],
    });
    expect(body.errors).toBeUndefined();
    expect(body.data?._entities).toEqual([
      { name: 'postgres-main', org: 'acme', health: expect.any(String) },
      { id: BACKUP_ID, target: { name: 'postgres-main' } },
      { name: RESTORE.name, phase: 'Succeeded', target: { name: 'postgres-main' }, backup: { id: BACKUP_ID } },
      null,
    ]);
  });
});

describe('authentication and scoping', () => {
  it('answers UNAUTHENTICATED without a principal, or with a forged one', async () => {
    const anonymous = await graph(undefined, '{ strataTargets { name } }');
    expect(anonymous.data).toBeNull();
    expect(anonymous.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    const forged = await request(h.app).post('/graphql').set('x-strata-principal', 'eyJhbGciOiJFZERTQSJ9.e30.AAAA').send({ query: '{ strataBackup(id: "x") { id } }' });
    expect(forged.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const entities = await graph(undefined, ENTITIES, { r: [{ __typename: 'Backup', id: BACKUP_ID }] });
    expect(entities.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });

  it('hides the targets of other orgs, with their backups and restores', async () => {
    const scoped = await graph(
      OTHER_ORG,
      `query($id: ID!, $r: [_Any!]!) {
        strataTargets { name }
        strataTarget(namespace: "default", name: "postgres-main") { name }
        strataBackup(id: $id) { id }
        strataRestores { name }
        strataRestore(namespace: "default", name: "${RESTORE.name}") { name }
        _entities(representations: $r) { ... on Target { name } ... on Backup { id } }
      }`,
      { id: BACKUP_ID, r: [{ __typename: 'Target', namespace: 'default', name: 'postgres-main' }, { __typename: 'Backup', id: BACKUP_ID }] },
    );
    expect(scoped.errors).toBeUndefined();
    expect(scoped.data).toEqual({ strataTargets: [], strataTarget: null, strataBackup: null, strataRestores: [], strataRestore: null, _entities: [null, null] });

    const member = await graph(ACME, '{ strataTargets { name } strataRestores { name } }');
    expect(member.data).toEqual({ strataTargets: [{ name: 'postgres-main' }], strataRestores: [{ name: RESTORE.name }] });
  });
});
