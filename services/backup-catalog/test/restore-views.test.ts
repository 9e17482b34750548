// A restore's source, destination, plan and checks: what the catalog records when a restore is asked for (the moment
// asked or latest, the moment its plan restores), and GET /restores/{ns}/{name} and the subgraph's Restore saying the same.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strataPrincipal } from '@sigil/kit/testing';
import { strataEventSubject } from '@sigil/proto/strata-jobs';
import { graph } from './console-graph-fixtures.ts';
import { until, type CatalogHarness } from './helpers.ts';
import { MAIN, MAIN_NEWER, MAIN_OLDER, requestRestore, startRestoreCatalog } from './restore-fixtures.ts';

const VIEWER = strataPrincipal('viewer');
/** Between the two fulls of postgres-main: without change capture the older one is restored, and says when it shows. */
const ASKED = '2026-11-21T10:00:00.000Z';
const CHECKS = [{ name: 'schema-matches', passed: true, message: '' }, { name: 'row-estimates-within-10pct', passed: false, message: 'public.orders: 1200 rows estimated, 2000 before' }];
const FIELDS = `namespace name safetyBackup source { backupID time latest targetNamespace }
  destination { mode sandboxTTL expose deleteAfter database host tables }
  plan { baseBackupID segments bytes targetTime effectiveTime message } checks { name passed message }`;

let h: CatalogHarness;
const names: Record<'asked' | 'latest' | 'byId' | 'inPlace' | 'sandbox', string> = { asked: '', latest: '', byId: '', inPlace: '', sandbox: '' };
const target = `${MAIN.namespace}/${MAIN.name}`;

beforeAll(async () => {
  h = await startRestoreCatalog('restore_views');
  names.asked = await requestRestore(h, 'restorer', { target, mode: 'download', at: ASKED });
  names.latest = await requestRestore(h, 'restorer', { target, mode: 'new', host: '10.0.0.7', port: 5433, database: 'restored_app', credentialsSecret: 'default/postgres-credentials', tables: ['public.orders'] });
  names.byId = await requestRestore(h, 'restorer', { target, mode: 'download', backupID: MAIN_OLDER.id });
  names.inPlace = await requestRestore(h, 'restorer-admin', { target, mode: 'in-place', confirm: MAIN.name, at: 'latest' });
  // deleteAfter is what a verification restore asks for (restores/verification.ts); the API does not offer it.
  const sandbox = await h.runtime.deps.sandboxRestores.request(strataPrincipal('restorer'), { target, mode: 'sandbox', at: ASKED, ttl: '2h', expose: true }, { deleteAfter: true });
  names.sandbox = sandbox.name;
});
afterAll(async () => h?.close());

const restOf = async (name: string) => {
  const res = await h.call('viewer', 'get', `/api/v1/restores/${MAIN.namespace}/${name}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.restore;
};

describe('what a restore records of what was asked and what its plan restores', () => {
  it('a moment without change capture: the newest full at or before it, and the moment its data show', async () => {
    const restore = await restOf(names.asked);
    expect(restore.source).toEqual({ backupID: MAIN_OLDER.id, latest: false, time: ASKED, targetNamespace: 'default' });
    expect(restore.plan).toEqual({
      baseBackupID: MAIN_OLDER.id, segments: 0, bytes: MAIN_OLDER.storedBytes, targetTime: ASKED, effectiveTime: MAIN_OLDER.time,
      message: expect.stringContaining(`consistent at ${MAIN_OLDER.time} (the newest backup at or before ${ASKED}`),
    });
  });

  it('latest: said as latest, with the moment it restored; a backup chosen by id has no plan', async () => {
    const latest = await restOf(names.latest);
    expect(latest.source).toEqual({ backupID: MAIN_NEWER.id, latest: true, targetNamespace: 'default' });
    expect(latest.plan).toEqual({ baseBackupID: MAIN_NEWER.id, segments: 0, bytes: MAIN_NEWER.storedBytes, effectiveTime: MAIN_NEWER.time, message: `backup ${MAIN_NEWER.id}, consistent at ${MAIN_NEWER.time}` });
    expect((await restOf(names.inPlace)).source).toMatchObject({ latest: true });
    const byId = await restOf(names.byId);
    expect(byId.source).toEqual({ backupID: MAIN_OLDER.id, latest: false, targetNamespace: 'default' });
    expect(byId.plan).toBeNull();
  });

  it('where each mode goes, and the safety backup of an in-place restore', async () => {
    expect((await restOf(names.latest)).destination).toEqual({ mode: 'new', host: '10.0.0.7:5433', database: 'restored_app', tables: ['public.orders'] });
    expect((await restOf(names.sandbox)).destination).toEqual({ mode: 'sandbox', sandboxTTL: '2h', expose: true, deleteAfter: true });
    const inPlace = await restOf(names.inPlace);
    const safety = await h.runtime.db.backup.findFirstOrThrow({ where: { targetName: MAIN.name, reason: { startsWith: 'safety backup' } } });
    expect(inPlace).toMatchObject({ safetyBackup: safety.id, destination: { mode: 'in-place', host: '127.0.0.1:9' } });
  });

  it("the checks the mover reports, once it reports them", async () => {
    expect((await restOf(names.latest)).checks).toEqual([]);
    const row = await h.runtime.db.restore.findFirstOrThrow({ where: { name: names.latest } });
    const id = randomUUID();
    const finishedAt = new Date().toISOString();
    const data = { restoreId: row.id, finishedAt, databases: ['restored_app'], message: 'restored; a check failed', checks: CHECKS };
    await h.bus.publish(strataEventSubject('restore.succeeded', h.cell), { id, type: 'restore.succeeded', occurredAt: finishedAt, data }, { msgId: id });
    await until(() => h.runtime.db.restore.findUnique({ where: { id: row.id } }), (restore) => restore?.phase === 'Succeeded');
    expect((await restOf(names.latest)).checks).toEqual(CHECKS);
  });
});

/** A JSON value without its null members: GraphQL says null where the console API leaves a member out. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== null).map(([key, member]) => [key, withoutNulls(member)]));
}

describe("the subgraph's Restore", () => {
  it('carries the source, destination, plan, checks and safety backup of the console API, in every mode', async () => {
    for (const name of Object.values(names)) {
      const rest = await restOf(name);
      const body = await graph(h, VIEWER, `query($name: String!) { strataRestore(namespace: "default", name: $name) { ${FIELDS} } }`, { name });
      expect(body.errors).toBeUndefined();
      const { namespace, safetyBackup, source, destination, plan, checks } = rest;
      expect(withoutNulls(body.data?.strataRestore)).toEqual(withoutNulls({ namespace, name, safetyBackup, source, destination, plan, checks }));
    }
  });

  it('answers null for what a restore does not have, and the same in lists and entities', async () => {
    const byId = await graph(h, VIEWER, `{ strataRestore(namespace: "default", name: "${names.byId}") { safetyBackup plan { baseBackupID } source { time } destination { tables sandboxTTL } } }`);
    expect(byId.data?.strataRestore).toEqual({ safetyBackup: null, plan: null, source: { time: null }, destination: { tables: null, sandboxTTL: null } });
    const one = await graph(h, VIEWER, `{ strataRestore(namespace: "default", name: "${names.asked}") { ${FIELDS} } }`);
    const listed = await graph(h, VIEWER, `{ strataRestores(limit: 10) { ${FIELDS} } }`);
    const entities = await graph(h, VIEWER, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Restore { ${FIELDS} } } }`, { r: [{ __typename: 'Restore', namespace: 'default', name: names.asked }] });
    expect((listed.data?.strataRestores as Array<{ name: string }>).find((restore) => restore.name === names.asked)).toEqual(one.data?.strataRestore);
    expect(entities.data?._entities).toEqual([one.data?.strataRestore]);
  });
});
