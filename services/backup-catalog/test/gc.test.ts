import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import type { BackupStoreSpec } from '@sigil/proto/resources';
import { segmentKey, segmentReportKey } from '@sigil/proto/strata-jobs';
import { createS3Client, ensureBucket, listKeys } from '@strata/stream';
import { collectGarbage } from '../src/lifecycle/gc.ts';
import { startCatalogHarness, generateAgeIdentity, type CatalogHarness } from './helpers.ts';
import { s3Env, stackDocuments } from './fixtures.ts';

/**
 * Garbage collection of expired change-log segments against the test S3: a segment's row goes only with both its
 * objects, the segment and the report written after it (object times are whole seconds, so one pass may find the
 * segment old enough and its report too recent).
 */
const bucket = `strata-gc-${randomBytes(3).toString('hex')}`;
let h: CatalogHarness;
const s3 = () => createS3Client({ ...s3Env(), accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Until the next whole second of the wall clock (and a little past it): objects' times are whole seconds. */
const nextSecond = () => sleep(1000 - (Date.now() % 1000) + 20);
const modifiedAt = async (key: string) => (await s3().statObject(bucket, key)).lastModified;

async function store() {
  return (await h.runtime.deps.resources.get<BackupStoreSpec>(h.runtime.db, 'BackupStore', 'default', 'local'))!;
}

async function keys(): Promise<string[]> {
  const found: string[] = [];
  for await (const key of listKeys(s3(), bucket, 'strata/')) found.push(key);
  return found.sort();
}

async function expiredSegment(name: string): Promise<string> {
  const key = segmentKey('strata', 'default', 'postgres-main', '7000000000000000001-1', name, true);
  await h.runtime.db.segment.create({
    data: { key, namespace: 'default', targetName: 'postgres-main', chainId: '7000000000000000001-1', timeline: 1, name, startPos: '0/1000000', endPos: '0/2000000', startLsn: 0x1000000n, endLsn: 0x2000000n, sha256: 'a'.repeat(64), size: 4n, uploadedAt: new Date(), expired: true },
  });
  return key;
}

beforeAll(async () => {
  // A margin of a second: the test waits it out instead of a minute.
  h = await startCatalogHarness('gc', { config: { GC_SKEW_MARGIN_MS: 1000 } });
  const { recipient } = await generateAgeIdentity();
  const docs = stackDocuments({ bucket, recipients: [recipient], postgres: { host: '127.0.0.1', port: 5432, username: 'postgres' } });
  expect((await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml')).status).toBe(200);
  await ensureBucket(s3(), bucket, s3Env().region);
  // The apply kicked a scheduler pass: let it and its collection end before the tests put objects.
  await h.runtime.tick();
  await h.runtime.lifecycle.idle();
});
afterAll(async () => h?.close());

describe('garbage collection of expired segments', () => {
  it('keeps the row while the report is too recent to go, and takes both at the next pass', async () => {
    const segment = await expiredSegment('000000010000000000000001');
    await nextSecond();
    await s3().putObject(bucket, segment, Buffer.from('wal!'));
    await nextSecond();
    await s3().putObject(bucket, segmentReportKey(segment), Buffer.from('{}'));
    // A pass that began in the report's second: the segment is old enough, the report is not.
    const reportTime = await modifiedAt(segmentReportKey(segment));
    expect(reportTime.getTime()).toBeGreaterThan((await modifiedAt(segment)).getTime());
    const first = await collectGarbage(h.runtime.deps, await store(), { dryRun: false, skewMarginMs: 0, startedAt: reportTime });
    expect(first.keys, JSON.stringify(first)).toEqual([segment]);
    expect(await keys()).toEqual([segmentReportKey(segment)]);
    expect(await h.runtime.db.segment.count({ where: { key: segment } })).toBe(1);
    const second = await collectGarbage(h.runtime.deps, await store(), { dryRun: false, skewMarginMs: 0, startedAt: new Date(reportTime.getTime() + 1000) });
    expect(second.keys).toEqual([segmentReportKey(segment)]);
    expect(await keys()).toEqual([]);
    expect(await h.runtime.db.segment.count({ where: { key: segment } })).toBe(0);
  });

  it('drops the row of an expired segment whose objects are already gone', async () => {
    const segment = await expiredSegment('000000010000000000000002');
    const pass = await collectGarbage(h.runtime.deps, await store(), { dryRun: false, skewMarginMs: 0 });
    expect(pass).toMatchObject({ objects: 0, dryRun: false });
    expect(await h.runtime.db.segment.count({ where: { key: segment } })).toBe(0);
  });

  it('comes back by itself for garbage a pass found too recent, once the margin has passed', async () => {
    const id = 'bk-gc-waiting';
    const prefix = `strata/default/postgres-main/${id}/`;
    await h.runtime.db.backup.create({
      data: { id, namespace: 'default', name: `postgres-main-${id}`, targetName: 'postgres-main', store: 'local', policy: 'nightly', engine: 'postgres', phase: 'Expired', queuedAt: new Date(), expiredAt: new Date() },
    });
    await s3().putObject(bucket, `${prefix}manifest.json`, Buffer.from('{}'));
    await s3().putObject(bucket, `${prefix}data/app.pgdump.zst.age`, Buffer.from('dump'));
    await h.runtime.lifecycle.tick();
    await h.runtime.lifecycle.idle();
    const first = (await store()).status as { lastGCWaiting?: number };
    await sleep(2500);
    // No expiry since: only the garbage the last pass left waiting makes this pass due.
    await h.runtime.lifecycle.tick();
    await h.runtime.lifecycle.idle();
    expect((await keys()).filter((k) => k.startsWith(prefix)), `the first pass left ${first.lastGCWaiting} waiting`).toEqual([]);
    expect(((await store()).status as { lastGCWaiting?: number }).lastGCWaiting).toBe(0);
  });

  it('a dry run deletes neither objects nor rows', async () => {
    const segment = await expiredSegment('000000010000000000000003');
    await s3().putObject(bucket, segment, Buffer.from('wal!'));
    await s3().putObject(bucket, segmentReportKey(segment), Buffer.from('{}'));
    await nextSecond();
    const dry = await collectGarbage(h.runtime.deps, await store(), { dryRun: true, skewMarginMs: 0 });
    expect(dry.keys).toEqual([segment, segmentReportKey(segment)]);
    expect(await keys()).toEqual([segment, segmentReportKey(segment)]);
    expect(await h.runtime.db.segment.count({ where: { key: segment } })).toBe(1);
  });
});
