// What the console answers about a new user's mistakes and failed runs: every apply problem at once, filters
// checked against their allowed values, failed backups shown as failed.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStrataOpenApi } from '@sigil/proto/strata-openapi';
import { strataEventSubject } from '@sigil/proto/strata-jobs';
import { startCatalogHarness, generateAgeIdentity, offlineStoreDocuments, type CatalogHarness } from './helpers.ts';

let h: CatalogHarness;
let recipient: string;

const policy = (schedule: string) => `apiVersion: backups.strata.dev/v1alpha1
kind: BackupPolicy
metadata: { name: nightly }
spec: { store: local, full: { schedule: "${schedule}" } }`;

const target = (name: string, engine = 'postgres', port: number | string = 5432, namespace = 'default') => `apiVersion: backups.strata.dev/v1alpha1
kind: BackupTarget
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  engine: ${engine}
  endpoint: { host: ${name}.internal, port: ${port} }
  credentials: { secretRef: { name: creds } }
  policy: nightly`;

const store = () => offlineStoreDocuments(recipient)[1]!;

const secret = offlineStoreDocuments('')[0]!;

const apply = (docs: string[]) => h.call('restorer-admin', 'post', '/api/v1/resources', docs.join('\n---\n'), 'application/yaml');

beforeAll(async () => {
  h = await startCatalogHarness('mistakes');
  ({ recipient } = await generateAgeIdentity());
});
afterAll(async () => h?.close());

describe('apply reports every problem at once', () => {
  it('lists each problem of each document with its resource and field, and applies nothing', async () => {
    const res = await apply([
      secret,
      store(),
      policy('0 3 * *'),
      target('orders', 'oracle', 'high', 'prod'),
      `apiVersion: v1\nkind: Secret\nmetadata: { name: Bad_Name }\ndata: { key: "not base64!" }`,
    ]);
    expect(res.status).toBe(400);
    const problems = [
      { document: 3, kind: 'BackupPolicy', namespace: 'default', name: 'nightly', path: 'spec.full.schedule' },
      { document: 4, kind: 'BackupTarget', namespace: 'prod', name: 'orders', path: 'spec.engine' },
      { document: 4, kind: 'BackupTarget', namespace: 'prod', name: 'orders', path: 'spec.endpoint.port' },
      { document: 5, kind: 'Secret', namespace: 'default', name: 'Bad_Name', path: 'metadata.name' },
      { document: 5, kind: 'Secret', namespace: 'default', name: 'Bad_Name', path: 'data.key' },
    ];
    expect(res.body.errors).toEqual(problems.map((p) => ({ ...p, message: expect.any(String) })));
    for (const p of res.body.errors as Array<{ message: string }>) expect(p.message).not.toMatch(/^spec\.|^metadata\.|^data\./);
    const lines = (res.body.error as string).split('\n');
    expect(lines[0]).toBe('5 problems, nothing was applied:');
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^ {2}BackupPolicy default\/nightly: spec\.full\.schedule: .*cron/),
      expect.stringMatching(/^ {2}BackupTarget prod\/orders: spec\.engine: .*postgres/),
      expect.stringMatching(/^ {2}BackupTarget prod\/orders: spec\.endpoint\.port: /),
      expect.stringMatching(/^ {2}Secret default\/Bad_Name: metadata\.name: must be a lowercase DNS name$/),
      expect.stringMatching(/^ {2}Secret default\/Bad_Name: data\.key: must be base64$/),
    ]);
    expect(await h.runtime.db.resource.count()).toBe(0);
    expect(await h.runtime.db.secret.count()).toBe(0);
  });

  it('keeps the one-line message for a single problem', async () => {
    const res = await apply([secret, store(), policy('0 3 * *')]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^BackupPolicy default\/nightly: spec\.full\.schedule: [^\n]+$/);
    expect(res.body.errors).toHaveLength(1);
  });

  it('reports every refused Backup and Restore of an apply, rolling back the rest', async () => {
    const backup = (name: string, spec: string) => `apiVersion: backups.strata.dev/v1alpha1\nkind: Backup\nmetadata: { name: ${name} }\nspec: ${spec}`;
    const res = await apply([secret, store(), policy('0 3 * * *'), backup('one', '{ target: nowhere }'), backup('two', '{ target: x, backupID: 20990101t000000z-00000000 }')]);
    expect(res.status).toBe(404);
    expect(res.body.errors).toEqual([
      { document: 4, kind: 'Backup', namespace: 'default', name: 'one', path: '', message: 'Target default/nowhere was not found.' },
      { document: 5, kind: 'Backup', namespace: 'default', name: 'two', path: '', message: expect.stringMatching(/^spec\.backupID: .* is not in any store/) },
    ]);
    expect(res.body.error).toMatch(/^2 problems, nothing was applied:\n {2}Backup default\/one: Target default\/nowhere was not found\.\n {2}Backup default\/two: spec\.backupID/);
    expect(await h.runtime.db.resource.count()).toBe(0);
  });
});

describe('enumerated query parameters are checked', () => {
  type Param = { name?: string; in?: string; schema?: { $ref?: string; enum?: string[] } };
  const doc = loadStrataOpenApi() as { paths: Record<string, Record<string, { operationId?: string; 'x-strata-service'?: string; parameters?: Param[] }>>; components: { schemas: Record<string, { enum?: string[] }> } };
  const enumerated = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.values(item).flatMap((op) =>
      op['x-strata-service'] === 'backup-catalog' && op.operationId
        ? (op.parameters ?? []).flatMap((p) => {
            const values = p.schema?.$ref ? doc.components.schemas[p.schema.$ref.split('/').pop() as string]?.enum : p.schema?.enum;
            return p.in === 'query' && values ? [{ operationId: op.operationId as string, path, name: p.name as string, values }] : [];
          })
        : [],
    ),
  );

  it('finds the filters to check (health of targets, kind of resources)', () => {
    expect(enumerated.map((e) => `${e.operationId}.${e.name}`)).toEqual(expect.arrayContaining(['listTargets.health', 'listResources.kind']));
  });

  it.each([['purple'], ['OK']])('answers 400 naming the allowed values for %s', async (bad) => {
    for (const e of enumerated) {
      const url = `/api/v1${e.path.replace(/\{[^}]+\}/g, 'x')}?${e.name}=${bad}`;
      const res = await h.call('restorer-admin', 'get', url);
      expect(res.status, url).toBe(400);
      expect(res.body).toEqual({ error: `query.${e.name}: must be one of ${e.values.join(', ')}` });
    }
  });

  it('accepts every allowed health', async () => {
    const healths = enumerated.find((e) => e.name === 'health')?.values ?? [];
    expect(healths).toEqual(['ok', 'never', 'failing', 'stale', 'suspended', 'misconfigured']);
    for (const health of healths) expect((await h.call('viewer', 'get', `/api/v1/targets?health=${health}`)).status).toBe(200);
  });
});

describe('failed runs look failed', () => {
  async function until<T>(read: () => Promise<T>, ready: (value: T) => boolean): Promise<T> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const value = await read();
      if (ready(value)) return value;
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Plays the mover: starts a run of default/orders and reports its end. */
  async function run(report: (backupId: string) => { type: 'backup.succeeded' | 'backup.failed'; data: Record<string, unknown> }) {
    const started = await h.call('operator', 'post', '/api/v1/targets/default/orders/backup-now', {});
    expect(started.status).toBe(202);
    const row = (await until(() => h.runtime.db.backup.findFirst({ where: { name: started.body.name } }), (r) => r?.phase === 'Running'))!;
    const { type, data } = report(row.id);
    const id = randomUUID();
    await h.bus.publish(strataEventSubject(type, h.cell), { id, type, occurredAt: new Date().toISOString(), data }, { msgId: id });
    await until(() => h.runtime.db.backup.findUnique({ where: { id: row.id } }), (r) => r?.phase !== 'Running');
    return row.id;
  }

  it('lists each run with its phase; a failed one carries its error and is not restorable', async () => {
    expect((await apply([secret, store(), policy('0 3 * * *'), target('orders')])).status).toBe(200);
    const at = new Date().toISOString();
    const good = await run((backupId) => ({
      type: 'backup.succeeded',
      data: { backupId, manifestKey: `strata/default/orders/${backupId}/manifest.json`, manifest: { id: backupId, consistentAt: at, completedAt: at, databases: ['app'], stats: { rawBytes: 10, storedBytes: 5 } } },
    }));
    const message = 'pg_dump: error: connection to server at "orders.internal" (10.0.0.9), port 5432 failed: Connection refused';
    const bad = await run((backupId) => ({ type: 'backup.failed', data: { backupId, message, finishedAt: new Date().toISOString() } }));

    const list = await h.call('viewer', 'get', '/api/v1/targets/default/orders/backups');
    expect(list.status).toBe(200);
    expect(list.body.backups).toEqual([
      expect.objectContaining({ id: bad, phase: 'Failed', restorable: false, error: message }),
      expect.objectContaining({ id: good, phase: 'Succeeded', restorable: true, error: '', time: at, databases: ['app'] }),
    ]);
    expect(list.body.backups[0]).not.toHaveProperty('completed');

    const detail = await h.call('viewer', 'get', `/api/v1/backups/${bad}`);
    expect(detail.body.backup).toMatchObject({ id: bad, phase: 'Failed', restorable: false, error: message });

    const restore = await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/orders', backupID: bad, mode: 'download' });
    expect(restore.status).toBe(422);
    expect(restore.body.error).toMatch(/Failed; only a completed backup can be restored/);
  });
});

describe('a restore or sandbox request without its target', () => {
  it('is a 400 naming the member, never a 500, whatever else it carries', async () => {
    const bodies = [{}, { backupID: 'bk_1' }, { tables: ['public.orders'] }, { confirm: 'orders' }, { mode: 'new', at: 'latest' }];
    for (const body of bodies) {
      const res = await h.call('restorer', 'post', '/api/v1/restores', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error, JSON.stringify(body)).toMatch(/target/);
    }
  });
});
