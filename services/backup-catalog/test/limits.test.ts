import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchQueued } from '../src/backups/backups.ts';
import { startOfflineCatalog, type CatalogHarness } from './helpers.ts';

/** No mover runs here: dispatched backups stay Running, so the limits can be observed. */
let h: CatalogHarness;

const policy = (name: string, limits: Record<string, number>) => `apiVersion: backups.strata.dev/v1alpha1
kind: BackupPolicy
metadata: { name: ${name} }
spec:
  store: local
  full: { schedule: "0 3 * * *" }
  limits: ${JSON.stringify(limits)}`;

const target = (name: string, host: string, policyName: string) => `apiVersion: backups.strata.dev/v1alpha1
kind: BackupTarget
metadata: { name: ${name} }
spec:
  engine: postgres
  endpoint: { host: ${host}, port: 5432 }
  credentials: { secretRef: { name: creds } }
  policy: ${policyName}`;

beforeAll(async () => {
  h = await startOfflineCatalog('limits', [
    policy('limited', { perHost: 1, global: 2, priority: 0 }),
    policy('urgent', { perHost: 1, global: 2, priority: 10 }),
    target('a', 'db1.internal', 'limited'),
    target('b', 'db1.internal', 'limited'),
    target('c', 'db1.internal', 'urgent'),
    target('d', 'db2.internal', 'limited'),
  ]);
});
afterAll(async () => h?.close());

const phaseOf = async (targetName: string) => (await h.runtime.db.backup.findFirst({ where: { targetName }, orderBy: { queuedAt: 'desc' } }))?.phase;

describe('concurrency limits', () => {
  it('holds perHost and global, and starts the highest priority first when a slot frees', async () => {
    for (const name of ['a', 'b', 'd', 'c']) {
      const res = await h.call('operator', 'post', `/api/v1/targets/default/${name}/backup-now`, {});
      expect(res.status).toBe(202);
    }
    expect(await phaseOf('a')).toBe('Running');
    expect(await phaseOf('b')).toBe('Queued'); // same host as a
    expect(await phaseOf('d')).toBe('Running'); // another host
    expect(await phaseOf('c')).toBe('Queued');
    const queued = await h.call('viewer', 'get', '/api/v1/activity');
    expect(queued.body.backups.find((b: { target: string }) => b.target === 'b').message).toMatch(/waiting/);

    await h.runtime.db.backup.updateMany({ where: { targetName: 'a' }, data: { phase: 'Succeeded', completedAt: new Date() } });
    await dispatchQueued(h.runtime.deps);
    expect(await phaseOf('c')).toBe('Running'); // priority 10 beats the older b
    expect(await phaseOf('b')).toBe('Queued');

    await h.runtime.db.backup.updateMany({ where: { targetName: 'd' }, data: { phase: 'Succeeded', completedAt: new Date() } });
    await dispatchQueued(h.runtime.deps);
    expect(await phaseOf('b')).toBe('Queued'); // db1 is still busy with c

    await h.runtime.db.backup.updateMany({ where: { targetName: 'c' }, data: { phase: 'Failed', completedAt: new Date() } });
    await dispatchQueued(h.runtime.deps);
    expect(await phaseOf('b')).toBe('Running');
  });

  it('holds perTarget: one run of a target at a time by default, a second request waits or conflicts', async () => {
    const again = await h.call('operator', 'post', '/api/v1/targets/default/b/backup-now', {});
    expect(again.status).toBe(202);
    expect(await phaseOf('b')).toBe('Queued');
    const third = await h.call('operator', 'post', '/api/v1/targets/default/b/backup-now', {});
    expect(third.status).toBe(409);
  });

  it('does not queue scheduled runs of a suspended target', async () => {
    await h.call('operator', 'post', '/api/v1/targets/default/d/suspend', {});
    const before = await h.runtime.db.backup.count({ where: { targetName: 'd' } });
    const slot = new Date(Date.now() + 3 * 86_400_000);
    slot.setUTCHours(3, 1, 0, 0); // a minute after a 03:00 UTC slot: well within startingDeadline
    h.setNow(slot);
    await h.runtime.tick();
    expect(await h.runtime.db.backup.count({ where: { targetName: 'd' } })).toBe(before);
    expect(await h.runtime.db.backup.count({ where: { targetName: 'a', reason: 'scheduled' } })).toBe(1);
    h.setNow(new Date());
  });
});
