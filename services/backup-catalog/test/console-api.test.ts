import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { listStrataOperations, STRATA_ROLES, type StrataRole } from '@sigil/proto';
import { startCatalogHarness, generateAgeIdentity, type CatalogHarness } from './helpers.ts';
import { stackDocuments } from './fixtures.ts';

let h: CatalogHarness;
let docs: string;

beforeAll(async () => {
  h = await startCatalogHarness('console');
  const { recipient } = await generateAgeIdentity();
  docs = stackDocuments({ bucket: 'strata-console-test', recipients: [recipient], postgres: { host: '127.0.0.1', port: 5432, username: 'postgres' } });
});
afterAll(async () => h?.close());

describe('authentication and roles', () => {
  it('answers 401 with an error object without credentials', async () => {
    const res = await request(h.app).get('/api/v1/whoami');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: expect.any(String) });
  });

  it('answers 401 for a forged principal', async () => {
    const res = await request(h.app).get('/api/v1/whoami').set('x-strata-principal', 'eyJhbGciOiJFZERTQSJ9.e30.AAAA');
    expect(res.status).toBe(401);
  });

  it('returns the principal with its role', async () => {
    const res = await h.call('operator', 'get', '/api/v1/whoami');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ principal: { role: 'operator', email: 'operator@example.test' }, version: expect.any(String), externalURL: 'http://console.test' });
  });

  it('answers 403 below the operation role, before validating the input', async () => {
    const res = await h.call('viewer', 'post', '/api/v1/targets/default/x/backup-now', { reason: 'x'.repeat(5000) });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/operator/);
  });

  it('serves the OpenAPI document as YAML and JSON', async () => {
    const yaml = await h.call('viewer', 'get', '/api/v1/openapi.yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.headers['content-type']).toMatch(/yaml/);
    expect(yaml.text).toMatch(/x-strata-role/);
    const json = await request(h.app).get('/api/v1/openapi.yaml').set(await h.as('viewer')).set('accept', 'application/json');
    expect(json.body.openapi).toMatch(/^3\.1/);
  });
});

describe('apply', () => {
  it('needs restorer-admin', async () => {
    const res = await h.call('restorer', 'post', '/api/v1/resources', docs, 'application/yaml');
    expect(res.status).toBe(403);
  });

  it('refuses an invalid document naming the field, and applies nothing', async () => {
    const bad = docs.replace('schedule: "0 3 * * *"', 'schedule: "0 3 * *"');
    const res = await h.call('restorer-admin', 'post', '/api/v1/resources', bad, 'application/yaml');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/BackupPolicy default\/nightly: spec\.full\.schedule/);
    expect(await h.runtime.db.resource.count()).toBe(0);
    expect(await h.runtime.db.secret.count()).toBe(0);
  });

  it('refuses malformed YAML with 400', async () => {
    const res = await h.call('restorer-admin', 'post', '/api/v1/resources', 'kind: [unclosed', 'application/yaml');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/document 1/);
  });

  it('creates, then reports unchanged, then updated', async () => {
    const first = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
    expect(first.status).toBe(200);
    expect(first.body.applied.map((a: { action: string }) => a.action)).toEqual(['created', 'created', 'created', 'created', 'created']);
    const again = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
    expect(again.body.applied.every((a: { action: string }) => a.action === 'unchanged')).toBe(true);
    const changed = await h.call('restorer-admin', 'post', '/api/v1/resources', docs.replace('threads: 1', 'threads: 2'), 'application/yaml');
    expect(changed.body.applied.find((a: { kind: string }) => a.kind === 'BackupPolicy').action).toBe('updated');
  });

  it('never shows secret values', async () => {
    const list = await h.call('restorer-admin', 'get', '/api/v1/secrets');
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toMatch(/S3RVER/);
    expect(list.body.secrets[0]).toMatchObject({ name: expect.any(String), keys: expect.any(Array) });
    const stored = await h.runtime.db.secret.findFirst();
    expect(stored?.sealed).not.toMatch(/S3RVER/);
    const store = await h.call('viewer', 'get', '/api/v1/resources/BackupStore/default/local');
    expect(store.status).toBe(200);
    expect(store.body.spec.s3.credentialsSecret).toMatchObject({ name: 'store-credentials' });
  });

  it('accepts JSON documents too', async () => {
    const res = await h.call('restorer-admin', 'post', '/api/v1/resources', [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'extra' }, stringData: { a: 'b' } }]);
    expect(res.status).toBe(200);
    expect(res.body.applied).toEqual([{ kind: 'Secret', namespace: 'default', name: 'extra', action: 'created' }]);
  });
});

describe('targets', () => {
  it('lists targets with filters', async () => {
    const all = await h.call('viewer', 'get', '/api/v1/targets');
    expect(all.status).toBe(200);
    expect(all.body.targets).toHaveLength(1);
    expect(all.body.targets[0]).toMatchObject({ namespace: 'default', name: 'postgres-main', engine: 'postgres', env: 'test', org: 'acme', health: 'never', suspended: false });
    expect(all.body.catalogVersion).toBeGreaterThan(0);
    expect((await h.call('viewer', 'get', '/api/v1/targets?env=prod')).body.targets).toHaveLength(0);
    expect((await h.call('viewer', 'get', '/api/v1/targets?q=POSTGRES')).body.targets).toHaveLength(1);
    expect((await h.call('viewer', 'get', '/api/v1/targets?health=ok')).body.targets).toHaveLength(0);
  });

  it('shows detail with spec and status, 404 for an unknown target', async () => {
    const res = await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main');
    expect(res.status).toBe(200);
    expect(res.body.spec.engine).toBe('postgres');
    expect(res.body.status).toMatchObject({ phase: 'Ready', observedGeneration: 1 });
    expect((await h.call('viewer', 'get', '/api/v1/targets/default/nope')).status).toBe(404);
  });

  it('suspends and resumes, validates the reason', async () => {
    expect((await h.call('operator', 'post', '/api/v1/targets/default/postgres-main/suspend', { reason: 'x'.repeat(1001) })).status).toBe(400);
    expect((await h.call('operator', 'post', '/api/v1/targets/default/postgres-main/suspend', { reason: 'maintenance', extra: 1 })).status).toBe(400);
    const suspended = await h.call('operator', 'post', '/api/v1/targets/default/postgres-main/suspend', { reason: 'maintenance' });
    expect(suspended.status).toBe(200);
    expect(suspended.body.message).toMatch(/suspended/);
    expect((await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main')).body.target).toMatchObject({ suspended: true, health: 'suspended', phase: 'Suspended' });
    const resumed = await h.call('operator', 'post', '/api/v1/targets/default/postgres-main/resume');
    expect(resumed.status).toBe(200);
    expect((await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main')).body.target.suspended).toBe(false);
  });

  it('backup-now queues a Backup and answers 202 with an Action; a second one conflicts while queued', async () => {
    const res = await h.call('operator', 'post', '/api/v1/targets/default/postgres-main/backup-now', { reason: 'before the migration' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ kind: 'Backup', namespace: 'default', message: expect.any(String) });
    const list = await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/backups');
    expect(list.body.backups).toHaveLength(1);
    expect(list.body.backups[0]).toMatchObject({ target: 'postgres-main', reason: 'before the migration', engine: 'postgres' });
    const activity = await h.call('viewer', 'get', '/api/v1/activity');
    expect(activity.body.backups[0]).toMatchObject({ name: res.body.name, phase: 'Running' });
  });
});

describe('segment previews without previews, and the sandbox service away', () => {
  it("needs the restorer role; answers 404 saying why a segment has none; the sandbox service's operations are 503", async () => {
    const segment = '000000010000000000000003';
    const previews = `/api/v1/targets/default/postgres-main/segments/${segment}/previews`;
    expect((await request(h.app).get(previews)).status).toBe(401);
    expect((await h.call('viewer', 'get', previews)).status).toBe(403); // previews show rows: restorer and above
    let res = await h.call('restorer', 'get', previews);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: `Segment ${segment} of target default/postgres-main was not found.` });
    await h.runtime.db.segment.create({
      data: {
        key: `strata/default/postgres-main/wal/1-1/${segment}.zst.age`, namespace: 'default', targetName: 'postgres-main', chainId: '1-1', timeline: 1, name: segment,
        startPos: '0/3000000', endPos: '0/4000000', startLsn: 0x3000000n, endLsn: 0x4000000n, commits: 1, sha256: 'a'.repeat(64), size: 10n, rawSize: 16n, partial: false, compression: 'zstd', uploadedAt: new Date(),
      },
    });
    res = await h.call('restorer', 'get', previews);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: `Segment ${segment} of target default/postgres-main has no previews: previews are off for target default/postgres-main (spec.previews.enabled).` });
    await h.runtime.db.segment.deleteMany({ where: { targetName: 'postgres-main', name: segment } });
    const sandbox = await h.call('viewer', 'get', '/api/v1/sandboxes');
    expect(sandbox.status).toBe(503);
    expect(sandbox.body).toEqual({ error: 'The sandbox service is not available.' });
  });
});

describe('segments and plans', () => {
  it('lists no segments before change capture runs, and a plan before any backup is 422', async () => {
    const segments = await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/segments');
    expect(segments.status).toBe(200);
    expect(segments.body).toEqual({ target: 'default/postgres-main', segments: [] });
    expect((await h.call('viewer', 'get', '/api/v1/segments?since=2026-01-01T00:00:00Z')).body).toEqual({ segments: [], since: '2026-01-01T00:00:00.000Z' });
    expect((await h.call('viewer', 'get', '/api/v1/segments?since=yesterday')).status).toBe(400);
    const changes = await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/changes?since=2h');
    expect(changes.status).toBe(200);
    expect(changes.body).toMatchObject({ target: 'default/postgres-main', tables: {}, segments: [] });
    expect(Date.parse(changes.body.at) - Date.parse(changes.body.since)).toBe(2 * 3600_000);
    const plan = await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/plan?at=latest');
    expect(plan.status).toBe(422);
    expect(plan.body.error).toMatch(/no completed backup/);
    expect((await h.call('viewer', 'get', '/api/v1/targets/default/nope/plan')).status).toBe(404);
  });
});

describe('audit', () => {
  it('records every write with user, role, action, target, outcome and source address', async () => {
    // The gateway appends the caller's address as the last hop; what the caller wrote before it is not believed.
    await request(h.app).post('/api/v1/targets/default/postgres-main/suspend').set(await h.as('viewer')).set('x-forwarded-for', '198.51.100.66, 203.0.113.7').send({});
    // The record is written once the answer has gone out: look for it for a short while.
    type Event = { action: string; outcome: string; user: string };
    let res = await h.call('operator', 'get', '/api/v1/audit?limit=50');
    const isDenied = (e: Event) => e.outcome === 'denied' && e.user === 'viewer@example.test' && e.action === 'suspendTarget';
    for (let i = 0; i < 50 && !res.body.events.some(isDenied); i++) {
      await new Promise((r) => setTimeout(r, 50));
      res = await h.call('operator', 'get', '/api/v1/audit?limit=50');
    }
    expect(res.status).toBe(200);
    const denied = res.body.events.find(isDenied);
    expect(denied).toMatchObject({ user: 'viewer@example.test', role: 'viewer', action: 'suspendTarget', target: 'default/postgres-main', from: '203.0.113.7' });
    const backupNow = res.body.events.find((e: { action: string; outcome: string }) => e.action === 'backupNow' && e.outcome === 'ok');
    expect(backupNow).toMatchObject({ user: 'operator@example.test', role: 'operator', target: 'default/postgres-main', object: expect.stringMatching(/^postgres-main-/) });
    expect(res.body.events.some((e: { action: string; outcome: string }) => e.action === 'applyResources' && e.outcome === 'invalid')).toBe(true);
    const filtered = await h.call('operator', 'get', '/api/v1/audit?action=resumeTarget');
    expect(filtered.body.events.every((e: { action: string }) => e.action === 'resumeTarget')).toBe(true);
    expect((await h.call('viewer', 'get', '/api/v1/audit')).status).toBe(403);
  });
  it('records a write refused for text PostgreSQL cannot store, with that text replaced', async () => {
    const reason = `nul\u0000 and \ud800 ${Date.now()}`;
    const refused = await request(h.app).post('/api/v1/targets/default/postgres-main/backup-now').set(await h.as('operator')).set('content-type', 'application/json').send(JSON.stringify({ reason }));
    expect(refused.status).toBe(400);
    const stored = reason.replace('\u0000', '\uFFFD').replace('\ud800', '\uFFFD');
    type Event = { action: string; outcome: string; detail: { reason?: string } };
    let found: Event | undefined;
    for (let i = 0; i < 50 && !found; i++) {
      if (i) await new Promise((r) => setTimeout(r, 50));
      found = ((await h.call('operator', 'get', '/api/v1/audit?action=backupNow&limit=50')).body.events as Event[]).find((e) => e.detail.reason === stored);
    }
    expect(found).toMatchObject({ outcome: 'invalid', detail: { status: 400, reason: stored } });
  });
});

describe('settings', () => {
  it('lists stores and policies without secrets', async () => {
    const res = await h.call('viewer', 'get', '/api/v1/settings');
    expect(res.status).toBe(200);
    expect(res.body.stores[0]).toMatchObject({ name: 'local', bucket: 'strata-console-test', prefix: 'strata', readOnly: false });
    expect(res.body.policies[0]).toMatchObject({ name: 'nightly', store: 'local', schedule: '0 3 * * *', pitr: false });
    expect(res.body.catalog).toMatchObject({ targets: 1, version: expect.any(Number) });
    expect(JSON.stringify(res.body)).not.toMatch(/S3RVER/);
  });
});

describe('roles of every operation', () => {
  it('lists the four roles lowest first', () => {
    expect(STRATA_ROLES).toEqual(['viewer', 'operator', 'restorer', 'restorer-admin']);
  });
});

describe('every operation', () => {
  const ops = listStrataOperations().filter((op) => op.service === 'backup-catalog');
  const concrete = (path: string) =>
    `/api/v1${path.replace('{ns}', 'default').replace('{name}', 'postgres-main').replace('{id}', 'nope').replace('{other}', 'nope2').replace('{kind}', 'BackupTarget').replace('{segment}', 'seg').replace('{table}', 't')}`;

  it.each(ops.map((op) => [op.operationId, op] as const))('%s answers 401 without credentials', async (_id, op) => {
    const res = await request(h.app)[op.method as 'get'](concrete(op.path)).send({});
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: expect.any(String) });
  });

  it.each(ops.filter((op) => op.role !== 'viewer').map((op) => [op.operationId, op] as const))('%s answers 403 one role below its x-strata-role', async (_id, op) => {
    const below = STRATA_ROLES[STRATA_ROLES.indexOf(op.role) - 1] as StrataRole;
    const res = await h.call(below, op.method as 'get', concrete(op.path), {});
    expect(res.status).toBe(403);
    expect(res.body.error).toContain(op.role);
  });

  // The event stream never ends; it has its own test below.
  it.each(ops.filter((op) => op.operationId !== 'streamEvents').map((op) => [op.operationId, op] as const))('%s lets its own role through', async (_id, op) => {
    const res = await h.call(op.role, op.method as 'get', concrete(op.path), op.method === 'get' || op.method === 'delete' ? undefined : {});
    expect([401, 403]).not.toContain(res.status);
    // A refused apply adds its problems (`errors`) next to `error`.
    if (res.status >= 400) expect(res.body).toEqual({ error: expect.any(String), ...(res.body.errors ? { errors: expect.any(Array) } : {}) });
  });
});

describe('events', () => {
  it('streams coalesced server-sent events of changes', async () => {
    const { createServer } = await import('node:http');
    const server = createServer(h.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const controller = new AbortController();
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/events`, { headers: await h.as('viewer'), signal: controller.signal });
      expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
      const reader = res.body!.getReader();
      await h.call('operator', 'post', '/api/v1/targets/default/postgres-main/suspend', { reason: 'sse' });
      await h.call('operator', 'post', '/api/v1/targets/default/postgres-main/resume', {});
      // Suspend and resume coalesce into one update when they share a 500 ms window, two otherwise;
      // either way the stream ends on the latest state.
      const targetFrames: Array<Record<string, unknown>> = [];
      let buffer = '';
      const deadline = Date.now() + 10_000;
      while (targetFrames.at(-1)?.phase !== 'Ready' && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += new TextDecoder().decode(value);
        const frames = buffer.split('\n\n');
        buffer = frames.pop() ?? '';
        for (const frame of frames.filter((f) => f.includes('event: target'))) {
          expect(frame).toMatch(/^id: \d+$/m);
          targetFrames.push(JSON.parse(frame.split('\n').find((l) => l.startsWith('data: '))!.slice(6)));
        }
      }
      expect(targetFrames.length).toBeGreaterThanOrEqual(1);
      expect(targetFrames.length).toBeLessThanOrEqual(2);
      expect(targetFrames.at(-1)).toMatchObject({ kind: 'target', namespace: 'default', name: 'postgres-main', phase: 'Ready' });
    } finally {
      controller.abort();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('bad input', () => {
  it.each([
    ['limit above its bound', 'get', '/api/v1/targets/default/postgres-main/backups?limit=100000', undefined, 'viewer'],
    ['limit not a number', 'get', '/api/v1/activity?limit=many', undefined, 'viewer'],
    ['unknown body field', 'post', '/api/v1/targets/default/postgres-main/resume', { reason: 'x', force: true }, 'operator'],
    ['reason not a string', 'post', '/api/v1/targets/default/postgres-main/resume', { reason: 5 }, 'operator'],
    ['reason of 1001 characters', 'post', '/api/v1/targets/default/postgres-main/backup-now', { reason: 'r'.repeat(1001) }, 'operator'],
    ['restore without a mode', 'post', '/api/v1/restores', { target: 'default/postgres-main' }, 'restorer'],
    ['restore with an unknown mode', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'copy' }, 'restorer'],
    ['restore with a malformed target', 'post', '/api/v1/restores', { target: 'Not A Target', mode: 'download' }, 'restorer'],
    ['restore with a malformed time', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'download', at: 'yesterday' }, 'restorer'],
    ['restore with a port out of range', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'new', port: 70000 }, 'restorer'],
    ['new restore without a host', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'new', database: 'x', credentialsSecret: 'c' }, 'restorer'],
    ['pin with a bad expiry', 'post', '/api/v1/backups/nope/pin', { expires: 'soon' }, 'operator'],
    ['secret without data', 'put', '/api/v1/secrets/default/s', { data: {} }, 'restorer-admin'],
    ['malformed JSON', 'post', '/api/v1/restores', '{"target":', 'restorer'],
    ['a resource of an unknown kind', 'post', '/api/v1/resources', { apiVersion: 'backups.strata.dev/v1alpha1', kind: 'Nope', metadata: { name: 'x' }, spec: {} }, 'restorer-admin'],
    ['a target with an unknown engine', 'post', '/api/v1/resources', { apiVersion: 'backups.strata.dev/v1alpha1', kind: 'BackupTarget', metadata: { name: 'x' }, spec: { engine: 'oracle', endpoint: { host: 'h' }, credentials: { secretRef: { name: 's' } }, policy: 'p' } }, 'restorer-admin'],
    ['compression threads above 64', 'post', '/api/v1/resources', { apiVersion: 'backups.strata.dev/v1alpha1', kind: 'BackupPolicy', metadata: { name: 'x' }, spec: { store: 's', full: { schedule: '0 3 * * *' }, compression: { threads: 65 } } }, 'restorer-admin'],
    ['a bad time zone', 'post', '/api/v1/resources', { apiVersion: 'backups.strata.dev/v1alpha1', kind: 'BackupPolicy', metadata: { name: 'x' }, spec: { store: 's', full: { schedule: '0 3 * * *', timeZone: 'Mars/Olympus' } } }, 'restorer-admin'],
  ] as const)('%s gets 400', async (_what, method, url, body, role) => {
    const res = typeof body === 'string'
      ? await request(h.app)[method as 'post'](url).set(await h.as(role)).set('content-type', 'application/json').send(body)
      : await h.call(role, method, url, body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toEqual({ error: expect.any(String), ...(res.body.errors ? { errors: expect.any(Array) } : {}) });
  });

  it('answers 404 for unknown objects and paths', async () => {
    expect((await h.call('viewer', 'get', '/api/v1/backups/unknown-id')).status).toBe(404);
    expect((await h.call('viewer', 'get', '/api/v1/restores/default/unknown')).status).toBe(404);
    expect((await h.call('viewer', 'get', '/api/v1/nothing-here')).status).toBe(404);
    expect((await h.call('restorer-admin', 'delete', '/api/v1/secrets/default/unknown')).status).toBe(404);
  });

  it('answers 422 for an in-place restore by a restorer-admin (not available) and 403 for a restorer', async () => {
    expect((await h.call('restorer', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'in-place', confirm: 'postgres-main' })).status).toBe(403);
    const admin = await h.call('restorer-admin', 'post', '/api/v1/restores', { target: 'default/postgres-main', mode: 'in-place', confirm: 'postgres-main' });
    expect(admin.status).toBe(422);
  });
});
