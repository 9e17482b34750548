import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCatalogHarness, generateAgeIdentity, type CatalogHarness } from './helpers.ts';
import { stackDocuments } from './fixtures.ts';

/** Pins through the console API: how `expires` is read, and what cannot be pinned. */
let h: CatalogHarness;

async function backupRow(id: string, phase: string) {
  await h.runtime.db.backup.create({
    data: { id, namespace: 'default', name: `postgres-main-${id}`, targetName: 'postgres-main', store: 'local', policy: 'nightly', engine: 'postgres', phase, queuedAt: new Date('2026-11-20T03:00:00Z'), completedAt: new Date('2026-11-20T03:05:00Z') },
  });
}

beforeAll(async () => {
  h = await startCatalogHarness('pins');
  const { recipient } = await generateAgeIdentity();
  const docs = stackDocuments({ bucket: 'strata-pins-test', recipients: [recipient], postgres: { host: '127.0.0.1', port: 5432, username: 'postgres' } });
  expect((await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml')).status).toBe(200);
  await backupRow('bk-pin-kept', 'Succeeded');
  await backupRow('bk-pin-gone', 'Expired');
});
afterAll(async () => h?.close());

describe('pins', () => {
  it.each([
    ['a date, the start of that day in UTC', '2027-01-01', '2027-01-01T00:00:00.000Z'],
    ['an RFC 3339 time', '2027-01-01T12:30:00+02:00', '2027-01-01T10:30:00.000Z'],
  ])('expires as %s', async (_what, expires, pinExpires) => {
    const res = await h.call('operator', 'post', '/api/v1/backups/bk-pin-kept/pin', { expires, reason: 'audit' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { tags } = (await h.call('viewer', 'get', '/api/v1/backups/bk-pin-kept')).body;
    expect(tags).toMatchObject({ pinned: true, pinReason: 'audit', pinExpires });
  });

  it('expires as a duration from now, or never', async () => {
    const before = Date.now();
    expect((await h.call('operator', 'post', '/api/v1/backups/bk-pin-kept/pin', { expires: '30d' })).status).toBe(200);
    const pinExpires = Date.parse((await h.call('viewer', 'get', '/api/v1/backups/bk-pin-kept')).body.tags.pinExpires);
    expect(pinExpires).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    expect((await h.call('operator', 'post', '/api/v1/backups/bk-pin-kept/pin', {})).status).toBe(200);
    expect((await h.call('viewer', 'get', '/api/v1/backups/bk-pin-kept')).body.tags.pinExpires).toBeUndefined();
  });

  it('refuses what is neither, and an expired backup', async () => {
    expect((await h.call('operator', 'post', '/api/v1/backups/bk-pin-kept/pin', { expires: 'next year' })).status).toBe(400);
    const gone = await h.call('operator', 'post', '/api/v1/backups/bk-pin-gone/pin', { expires: '2027-01-01' });
    expect(gone.status).toBe(409);
    expect(gone.body.error).toMatch(/expired/);
  });
});
