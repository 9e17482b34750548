import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createS3Client, ensureBucket } from '@strata/stream';
import { bumpCatalogVersion } from '../src/db.ts';
import { s3Env, stackDocuments } from './fixtures.ts';
import { generateAgeIdentity, startCatalogHarness, type CatalogHarness } from './helpers.ts';

/**
 * A policy's `retain.newest` through the whole pass: applied as YAML, stored, read by the lifecycle's retention and
 * written to the catalog's rows. The quickstart's case: a backup, a migration, another backup, all on one day, where
 * `daily` alone keeps one backup a day and the first backup (what a diff compares against) would expire.
 */
const bucket = `strata-newest-${randomBytes(3).toString('hex')}`;
const DAY = '2026-11-20';
const NOW = new Date(`${DAY}T15:00:00Z`);
let h: CatalogHarness;

/** A policy of its own and a Postgres target under it, beside the stack's `nightly` and `postgres-main`. */
const periodOnly = `apiVersion: backups.strata.dev/v1alpha1
kind: BackupPolicy
metadata: { name: period-only, namespace: default }
spec: { store: local, full: { schedule: "0 3 * * *", timeZone: Europe/Paris }, retain: { newest: 0, daily: 7 } }
---
apiVersion: backups.strata.dev/v1alpha1
kind: BackupTarget
metadata: { name: postgres-period, namespace: default }
spec:
  engine: postgres
  endpoint: { host: 127.0.0.1, port: 5432 }
  credentials: { secretRef: { name: postgres-credentials } }
  policy: period-only`;

/** Five succeeded fulls of a target: one the day before, four on `DAY` (09:00 to 12:00 UTC, 10:00 to 13:00 in Paris). */
async function recordFulls(target: string): Promise<string[]> {
  const times = [`2026-11-19T09:00:00Z`, `${DAY}T09:00:00Z`, `${DAY}T10:00:00Z`, `${DAY}T11:00:00Z`, `${DAY}T12:00:00Z`];
  const rows = times.map((time, i) => {
    const completed = new Date(time);
    const id = `${time.replace(/[-:]/g, '').toLowerCase()}-${target}-${i}`;
    return {
      id, namespace: 'default', name: `${target}-${i}`, targetName: target, store: 'local', policy: target === 'postgres-main' ? 'nightly' : 'period-only', engine: 'postgres',
      phase: 'Succeeded', reason: 'manual', queuedAt: new Date(completed.getTime() - 60_000), startedAt: new Date(completed.getTime() - 50_000), completedAt: completed,
    };
  });
  await h.runtime.db.$transaction(async (tx) => {
    await tx.backup.createMany({ data: rows });
    await bumpCatalogVersion(tx);
  });
  return rows.map((r) => r.id);
}

async function outcome(target: string) {
  const rows = await h.runtime.db.backup.findMany({ where: { targetName: target }, orderBy: { completedAt: 'asc' } });
  return rows.map((r) => ({ phase: r.phase, retainedBy: r.retainedBy, expiresAt: r.expiresAt, expiredReason: r.expiredReason }));
}

beforeAll(async () => {
  h = await startCatalogHarness('retention_newest');
  const { recipient } = await generateAgeIdentity();
  const docs = stackDocuments({ bucket, recipients: [recipient], postgres: { host: '127.0.0.1', port: 5432, username: 'postgres' }, retain: { newest: 3, daily: 7 } });
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', `${docs}\n---\n${periodOnly}`, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await ensureBucket(createS3Client({ ...s3Env(), accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true }), bucket, s3Env().region);
  // The apply kicked a scheduler pass: let it and its collection end before the rows go in.
  await h.runtime.tick();
  await h.runtime.lifecycle.idle();
  h.setNow(NOW);
});
afterAll(async () => h?.close());

describe('retain.newest in the retention pass', () => {
  it('newest 3 keeps the three newest of a day; newest 0 leaves daily alone, one a day', async () => {
    await recordFulls('postgres-main');
    await recordFulls('postgres-period');
    await h.runtime.lifecycle.tick(NOW);
    await h.runtime.lifecycle.idle();

    const expired = (reason: string) => ({ phase: 'Expired', retainedBy: [], expiresAt: null, expiredReason: reason });
    const yesterday = { phase: 'Succeeded', retainedBy: ['daily'], expiresAt: new Date('2026-11-25T23:00:00Z'), expiredReason: null };
    const newestOfDay = { phase: 'Succeeded', retainedBy: ['newest', 'daily'], expiresAt: new Date('2026-11-26T23:00:00Z'), expiredReason: null };
    const onlyNewest = { phase: 'Succeeded', retainedBy: ['newest'], expiresAt: null, expiredReason: null };
    expect(await outcome('postgres-main')).toEqual([yesterday, expired('kept by no rule of retain {newest: 3, daily: 7}'), onlyNewest, onlyNewest, newestOfDay]);
    const periodExpired = expired('kept by no rule of retain {daily: 7}');
    expect(await outcome('postgres-period')).toEqual([yesterday, periodExpired, periodExpired, periodExpired, newestOfDay]);
  });
});
