import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupPrefix, manifestKey, pinKeyOfManifest } from '@sigil/proto/strata-jobs';
import { createS3Client, ensureBucket, objectExists, readSmallObject } from '@strata/stream';
import { startCatalogHarness, generateAgeIdentity, type CatalogHarness } from './helpers.ts';
import { s3Env, stackDocuments } from './fixtures.ts';

/** Pins through the console API: how `expires` is read, what cannot be pinned, and the pin kept in the store. */
let h: CatalogHarness;
// A bucket of its own per run: applying the store mirrors what its bucket holds, and a run before this one in the same
// test infrastructure left bk-pin-stored there (created again below, it would collide with the mirrored row).
const bucket = `strata-pins-${randomBytes(4).toString('hex')}`;
const s3 = () => createS3Client({ ...s3Env(), accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true });

async function backupRow(id: string, phase: string) {
  await h.runtime.db.backup.create({
    data: { id, namespace: 'default', name: `postgres-main-${id}`, targetName: 'postgres-main', store: 'local', policy: 'nightly', engine: 'postgres', phase, queuedAt: new Date('2026-11-20T03:00:00Z'), completedAt: new Date('2026-11-20T03:05:00Z') },
  });
}

beforeAll(async () => {
  h = await startCatalogHarness('pins');
  const { recipient } = await generateAgeIdentity();
  const docs = stackDocuments({ bucket, recipients: [recipient], postgres: { host: '127.0.0.1', port: 5432, username: 'postgres' } });
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

describe('pins in the store (pinSynced)', () => {
  const id = 'bk-pin-stored';
  const manifest = manifestKey(backupPrefix('strata', 'default', 'postgres-main', id));
  const pinKey = pinKeyOfManifest(manifest);
  const backup = async () => (await h.call('viewer', 'get', `/api/v1/backups/${id}`)).body;

  beforeAll(async () => {
    await ensureBucket(s3(), bucket, s3Env().region);
    const body = Buffer.from(JSON.stringify({ id, engine: 'postgres', policy: 'nightly', target: { namespace: 'default', name: 'postgres-main' }, startedAt: '2026-11-21T03:00:00Z', completedAt: '2026-11-21T03:05:00Z' }));
    await s3().putObject(bucket, manifest, body, body.length);
    await h.runtime.db.backup.create({
      data: { id, namespace: 'default', name: `postgres-main-${id}`, targetName: 'postgres-main', store: 'local', policy: 'nightly', engine: 'postgres', phase: 'Succeeded', queuedAt: new Date('2026-11-21T03:00:00Z'), completedAt: new Date('2026-11-21T03:05:00Z'), manifestKey: manifest },
    });
  });

  it('writes pin.json beside the manifest, and removes it on unpin', async () => {
    expect((await backup()).backup.pinSynced).toBe(true);
    expect((await h.call('operator', 'post', `/api/v1/backups/${id}/pin`, { expires: '2027-03-01', reason: 'legal hold' })).status).toBe(200);
    const stored = JSON.parse((await readSmallObject(s3(), bucket, pinKey))!.toString('utf8'));
    expect(stored).toMatchObject({ v: 1, backup: id, reason: 'legal hold', expires: '2027-03-01T00:00:00.000Z' });
    expect((await backup()).backup.pinSynced).toBe(true);
    expect((await h.call('operator', 'post', `/api/v1/backups/${id}/unpin`)).status).toBe(200);
    expect(await objectExists(s3(), bucket, pinKey)).toBe(false);
    expect((await backup()).backup.pinSynced).toBe(true);
  });

  it('a catalog rebuilt from the store keeps the pin', async () => {
    expect((await h.call('operator', 'post', `/api/v1/backups/${id}/pin`, { reason: 'forever' })).status).toBe(200);
    await h.runtime.db.backup.delete({ where: { id } });
    await h.runtime.mirror();
    const row = await h.runtime.db.backup.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ mirrored: true, pinned: true, pinReason: 'forever', pinExpires: null, pinSyncPending: false });
  });

  it('a pin the store could not take stays pending, and the next sync writes it', async () => {
    const { syncPendingPins } = await import('../src/backups/pin-sync.ts');
    await h.runtime.db.backup.update({ where: { id }, data: { pinReason: 'changed while the store was away', pinSyncPending: true } });
    expect((await backup()).backup.pinSynced).toBe(false);
    expect(await syncPendingPins(h.runtime.deps)).toEqual({ synced: 1, failed: 0 });
    expect(JSON.parse((await readSmallObject(s3(), bucket, pinKey))!.toString('utf8')).reason).toBe('changed while the store was away');
    expect((await backup()).backup.pinSynced).toBe(true);
  });
});
