// The console's other pages through the catalog's subgraph over HTTP: a backup's inventory, the restore wizard's
// plan, activity, audit and settings, each against what the console API answers, with its role and its scoping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strataPrincipal } from '@sigil/kit/testing';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { FAILED, FULL_1, FULL_2, INVENTORY, PITR, graph as graphOf, iso, startConsoleGraph, type ConsoleGraph } from './console-graph-fixtures.ts';

const VIEWER = strataPrincipal('viewer');
const OPERATOR = strataPrincipal('operator');
const ACME_OPERATOR = strataPrincipal('operator', { orgs: ['acme'] });
const OTHER_ORG = strataPrincipal('viewer', { orgs: ['other'] });

let c: ConsoleGraph;
const graph = (principal: StrataPrincipal | undefined, query: string, variables: Record<string, unknown> = {}) => graphOf(c.h, principal, query, variables);

beforeAll(async () => {
  c = await startConsoleGraph('graph_console');
  await c.h.runtime.db.auditEvent.createMany({
    data: [
      { time: new Date('2026-03-01T04:00:00Z'), user: 'ops@example.test', role: 'operator', action: 'backupNow', target: `default/${PITR.name}`, object: 'pg-pitr-run', outcome: 'ok', detail: { status: 202 } },
      { time: new Date('2026-03-01T04:01:00Z'), user: 'ops@example.test', role: 'operator', action: 'backupNow', target: 'default/pg-other', object: 'pg-other-run', outcome: 'ok', detail: { status: 202 } },
      { time: new Date('2026-03-01T04:02:00Z'), user: 'admin@example.test', role: 'restorer-admin', action: 'putSecret', target: 'default/creds', outcome: 'ok', detail: { status: 200 } },
    ],
  });
});
afterAll(async () => c?.h.close());

const INVENTORY_FIELDS = `collectedAt engine serverVersion schemaHash notes exactCounts { tables seconds skipped }
  databases { name sizeBytes schemaHash migrationVersion tables { schema name kind rowsEstimate exactRows totalBytes tableBytes indexBytes columns } }`;

describe("a backup's inventory", () => {
  it('is read from the store and decrypted with its catalog identity; null for a backup without one', async () => {
    const body = await graph(VIEWER, `{ full: strataBackup(id: "${FULL_1}") { inventory { ${INVENTORY_FIELDS} } } none: strataBackup(id: "${FULL_2}") { inventory { engine } } failed: strataBackup(id: "${FAILED}") { inventory { engine } } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      full: {
        inventory: {
          collectedAt: iso(1), engine: 'postgres', serverVersion: '15.4', schemaHash: 'sha256:abc', notes: INVENTORY.notes, exactCounts: INVENTORY.exactCounts,
          databases: [{ name: 'app', sizeBytes: 7_340_032, schemaHash: 'sha256:def', migrationVersion: '42', tables: [
            { schema: 'public', name: 'orders', kind: 'table', rowsEstimate: 1200, exactRows: 1187, totalBytes: 262_144, tableBytes: 196_608, indexBytes: 65_536, columns: 2 },
            { schema: 'public', name: 'events', kind: 'table', rowsEstimate: 2_500_000, exactRows: null, totalBytes: 6_291_456, tableBytes: null, indexBytes: null, columns: 1 },
          ] }],
        },
      },
      none: { inventory: null },
      failed: { inventory: null },
    });
  });

  it("is an error with GET .../inventory's message and status (422) once the store's identity is gone", async () => {
    expect((await c.h.call('restorer-admin', 'delete', '/api/v1/secrets/default/store-identity')).status).toBe(200);
    const rest = await c.h.call('viewer', 'get', `/api/v1/backups/${FULL_1}/inventory`);
    expect(rest.status).toBe(422);
    const body = await graph(VIEWER, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Backup { id inventory { engine } } } }`, { r: [{ __typename: 'Backup', id: FULL_1 }] });
    expect(body.errors).toEqual([expect.objectContaining({ message: rest.body.error, path: ['_entities', 0, 'inventory'], extensions: expect.objectContaining({ code: 'UNPROCESSABLE', status: 422 }) })]);
    expect(body.data?._entities).toEqual([{ id: FULL_1, inventory: null }]);
  });
});

const PLAN = 'restorable reason baseBackupID baseTime effectiveTime targetTime bytes segments windows { from to }';

describe('the restore plan', () => {
  it('is what GET /plan answers, inside a window and outside every one', async () => {
    for (const at of [iso(15), iso(45), 'latest']) {
      const rest = await c.h.call('viewer', 'get', `/api/v1/targets/default/${PITR.name}/plan?at=${encodeURIComponent(at)}`);
      const body = await graph(VIEWER, `query($at: String!) { strataPlan(namespace: "default", name: "${PITR.name}", at: $at) { ${PLAN} } }`, { at });
      expect(body.errors).toBeUndefined();
      expect(body.data?.strataPlan).toEqual({ reason: '', baseBackupID: null, baseTime: null, effectiveTime: null, targetTime: null, ...rest.body });
    }
    const inside = await graph(VIEWER, `{ strataPlan(namespace: "default", name: "${PITR.name}", at: "${iso(15)}") { restorable baseBackupID segments bytes effectiveTime } }`);
    expect(inside.data?.strataPlan).toEqual({ restorable: true, baseBackupID: FULL_1, segments: 2, bytes: 3_000_000 + 1001 + 1002, effectiveTime: iso(15) });
    const outside = await graph(VIEWER, `{ strataPlan(namespace: "default", name: "${PITR.name}", at: "${iso(45)}") { restorable reason } }`);
    expect(outside.data?.strataPlan).toEqual({ restorable: false, reason: expect.stringMatching(/lies outside every change-capture window/) });
  });

  it('refuses a target without a completed backup with NOT_RESTORABLE and status 422, and a bad time', async () => {
    const none = await graph(VIEWER, `{ strataPlan(namespace: "default", name: "pg-denied", at: "latest") { restorable } }`);
    expect(none.data?.strataPlan).toBeNull();
    expect(none.errors?.[0]).toMatchObject({ message: 'Target default/pg-denied has no completed backup yet.', extensions: { code: 'NOT_RESTORABLE', status: 422 } });
    const bad = await graph(VIEWER, `{ strataPlan(namespace: "default", name: "${PITR.name}", at: "noon") { restorable } }`);
    expect(bad.errors?.[0]?.extensions).toMatchObject({ status: 400 });
  });

  it('is null for a target the caller may not see', async () => {
    const body = await graph(OTHER_ORG, `{ strataPlan(namespace: "default", name: "${PITR.name}", at: "latest") { restorable } }`);
    expect(body).toEqual({ data: { strataPlan: null } });
  });
});

describe('activity', () => {
  it("lists GET /activity's runs and restores, of the targets the caller may see", async () => {
    const rest = await c.h.call('viewer', 'get', '/api/v1/activity?limit=10');
    const query = '{ strataActivity(limit: 10) { backups { namespace name target phase message reason backupID created bytes durationSeconds progress { stage } } restores { name target { name } } } }';
    const body = await graph(VIEWER, query);
    expect(body.errors).toBeUndefined();
    const activity = body.data?.strataActivity as { backups: Array<{ backupID: string }>; restores: Array<{ name: string }> };
    expect(activity.backups).toEqual(rest.body.backups);
    expect(activity.backups.map((b) => b.backupID)).toEqual([FAILED, FULL_2, FULL_1]);
    expect(activity.restores.map((r) => r.name)).toEqual((rest.body.restores as Array<{ name: string }>).map((r) => r.name));
    const other = await graph(OTHER_ORG, query);
    expect(other.data).toEqual({ strataActivity: { backups: [], restores: [] } });
  });

  it('refuses a limit above 500', async () => {
    expect((await graph(VIEWER, '{ strataActivity(limit: 501) { backups { name } } }')).errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  });
});

describe('audit', () => {
  const AUDIT = 'time user role action target object outcome from detail';

  it('needs the role operator', async () => {
    const body = await graph(VIEWER, `{ strataAudit { action } }`);
    expect(body.data).toBeNull();
    expect(body.errors?.[0]).toMatchObject({ message: 'This query needs the role operator; you are viewer.', extensions: { code: 'FORBIDDEN' } });
  });

  it('lists GET /audit, filtered by action and user', async () => {
    const rest = await c.h.call('operator', 'get', '/api/v1/audit?limit=50');
    const all = await graph(OPERATOR, `{ strataAudit(limit: 50) { ${AUDIT} } }`);
    expect(all.data?.strataAudit).toEqual(rest.body.events);
    const filtered = await graph(OPERATOR, `{ strataAudit(action: "backupNow", user: "ops@example.test") { target detail } }`);
    expect(filtered.data?.strataAudit).toEqual([{ target: 'default/pg-other', detail: { status: 202 } }, { target: `default/${PITR.name}`, detail: { status: 202 } }]);
  });

  it("shows a scoped operator only what was done to its org's targets", async () => {
    const body = await graph(ACME_OPERATOR, `{ strataAudit { action target } }`);
    expect(body.data?.strataAudit).toEqual([{ action: 'backupNow', target: `default/${PITR.name}` }]);
  });
});

describe('settings', () => {
  it('are what GET /settings answers', async () => {
    const rest = await c.h.call('viewer', 'get', '/api/v1/settings');
    const body = await graph(VIEWER, `{ strataSettings { version catalog { targets backups version }
      stores { name endpoint region bucket prefix phase message readOnly lastGC { at } } policies { namespace name store schedule verify retention pitr } } }`);
    expect(body.errors).toBeUndefined();
    const stores = (rest.body.stores as Array<Record<string, unknown>>).map((store) => ({ lastGC: null, ...store }));
    expect(body.data?.strataSettings).toEqual({ ...rest.body, stores });
    expect(body.data?.strataSettings).toMatchObject({ catalog: { targets: 3, backups: 2 }, stores: [{ bucket: c.bucket }], policies: [{ name: 'nightly', pitr: true }] });
  });

  it('need valid credentials', async () => {
    expect((await graph(undefined, '{ strataSettings { version } }')).errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });
});
