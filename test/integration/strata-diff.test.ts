import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE, uniqueDatabaseName } from '@strata/mover/testing';
import type { CatalogHarness } from '@strata/backup-catalog/testing';
import { myAccess, pgAccess, startLogicalStack, type LogicalStack } from './logical-targets.ts';
import { waitFor } from './wait.ts';

/**
 * The diff of two backups, for real on both engines: a migration between them (a column added with a default, a
 * column made nullable, a table renamed, rows backfilled and inserted, a new row in `_prisma_migrations`) comes back
 * exactly from the two inventories, with the migration's name, in either order of the two ids.
 */
const bucket = `strata-df-${randomBytes(3).toString('hex')}`;
const pgDb = uniqueDatabaseName('dfp');
const myDb = uniqueDatabaseName('dfm');
const MIGRATION = '20260301000000_add_tier';

let stack: LogicalStack;
let h: CatalogHarness;

async function backupNow(target: string): Promise<string> {
  const res = await h.call('operator', 'post', `/api/v1/targets/default/${target}/backup-now`, { reason: 'test' });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const row = await waitFor(`backup ${res.body.name}`, async () => {
    const found = await h.runtime.db.backup.findFirst({ where: { name: res.body.name } });
    return found && ['Succeeded', 'Failed'].includes(found.phase) ? found : undefined;
  });
  expect(row.phase, row.message).toBe('Succeeded');
  return row.id;
}

const MIGRATION_STEPS = {
  postgres: [
    `ALTER TABLE customers ADD COLUMN tier text NOT NULL DEFAULT 'free'`,
    `ALTER TABLE documents ALTER COLUMN title DROP NOT NULL`,
    `ALTER TABLE scratch RENAME TO scratch_archive`,
    `UPDATE customers SET tier = 'pro' WHERE id % 2 = 0`,
    `INSERT INTO audit_log (customer_id, action) SELECT id, 'tier' FROM customers ORDER BY id LIMIT 5`,
    `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ('0c8f8a4e-0000-4000-8000-000000000009', repeat('d', 64), now(), '${MIGRATION}', now(), 1)`,
    `ANALYZE`,
  ],
  mysql: [
    `ALTER TABLE customers ADD COLUMN tier VARCHAR(20) NOT NULL DEFAULT 'free'`,
    `ALTER TABLE documents MODIFY title VARCHAR(200) NULL`,
    `RENAME TABLE scratch TO scratch_archive`,
    `UPDATE customers SET tier = 'pro' WHERE id % 2 = 0`,
    `INSERT INTO audit_log (customer_id, action) SELECT id, 'tier' FROM customers ORDER BY id LIMIT 5`,
    `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ('0c8f8a4e-0000-4000-8000-000000000009', REPEAT('d', 64), NOW(3), '${MIGRATION}', NOW(3), 1)`,
  ],
};

/** Runs statements on the engine's source database; the rows of the last one. */
async function onSource(engine: 'postgres' | 'mysql', statements: string[]): Promise<Array<Record<string, unknown>>> {
  let last: Array<Record<string, unknown>> = [];
  if (engine === 'postgres') {
    const client = new pg.Client({ host: pgAccess.host, port: pgAccess.port, user: pgAccess.username, password: pgAccess.password, database: pgDb });
    await client.connect();
    for (const sql of statements) last = (await client.query(sql)).rows;
    await client.end();
    return last;
  }
  const c = await mysql.createConnection({ host: myAccess.host, port: myAccess.port, user: myAccess.username, password: myAccess.password, database: myDb });
  for (const sql of statements) last = (await c.query(sql))[0] as Array<Record<string, unknown>>;
  await c.end();
  return last;
}

const auditRows = async (engine: 'postgres' | 'mysql'): Promise<number> => Number((await onSource(engine, ['SELECT count(*) AS n FROM audit_log']))[0]!.n);

beforeAll(async () => {
  // Exact counts: the row deltas of the diff are then exact.
  const exact = (docs: string) => docs.replaceAll('  policy: nightly', '  exactCounts: {"enabled": true, "maxRows": 1000000}\n  policy: nightly');
  stack = await startLogicalStack({ label: 'diff', bucket, pgDb, myDb, edit: exact });
  h = stack.h;
}, 300_000);

afterAll(async () => stack?.stop());

const ids: Record<string, [string, string]> = {};

describe.each([
  { engine: 'postgres' as const, target: 'postgres-main', prefix: `${pgDb}.public.` },
  { engine: 'mysql' as const, target: 'mysql-main', prefix: `${myDb}.` },
])('$engine', ({ engine, target, prefix }) => {
  it('gives the exact diff of a migration between two backups, newer id first or second', async () => {
    const before = await backupNow(target);
    const auditBefore = await auditRows(engine);
    await onSource(engine, MIGRATION_STEPS[engine]);
    // The fixture's triggers write audit rows for the backfill too: the database's own count is the truth.
    const auditAfter = await auditRows(engine);
    expect(auditAfter).toBeGreaterThanOrEqual(auditBefore + 5);
    const after = await backupNow(target);
    ids[engine] = [before, after];
    const res = await h.call('viewer', 'get', `/api/v1/backups/${after}/diff/${before}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { diff, from, to, segments } = res.body;
    expect([from.id, to.id]).toEqual([before, after]);
    expect(segments).toEqual([]);
    expect(diff).toMatchObject({
      schemaChanged: true,
      databasesAdded: [],
      databasesDropped: [],
      tablesAdded: [],
      tablesDropped: [],
      tablesRenamed: [{ from: `${prefix}scratch`, to: `${prefix}scratch_archive`, matchedBy: 'identity' }],
      migrationBefore: FIXTURE.migrationVersion,
      migrationAfter: MIGRATION,
      migrationsApplied: [MIGRATION],
    });
    expect(diff.columns).toEqual([
      expect.objectContaining({ table: `${prefix}customers`, added: ['tier'], removed: [], typeChanged: [], nullabilityChanged: [], defaultChanged: [] }),
      expect.objectContaining({ table: `${prefix}documents`, added: [], removed: [], typeChanged: [], nullabilityChanged: ['title: NOT NULL → NULL'], defaultChanged: [] }),
    ]);
    const rows = new Map(diff.rows.map((r: { table: string }) => [r.table, r]));
    expect(rows.get(`${prefix}audit_log`)).toMatchObject({ rowsBefore: auditBefore, rowsAfter: auditAfter, estimated: false });
    expect(rows.get(`${prefix}_prisma_migrations`)).toMatchObject({ rowsBefore: 3, rowsAfter: 4, rowsPct: 33.33, estimated: false });
    expect(diff.lines.slice(0, 2)).toEqual([`--- backup ${before}`, `+++ backup ${after}`]);
    expect(diff.lines).toContain(engine === 'postgres' ? "+    tier text NOT NULL DEFAULT 'free'::text" : "+    tier varchar(20) NOT NULL DEFAULT 'free'");
    expect(diff.lines).toContain(`-  table ${prefix}scratch`);
    expect(diff.lines).toContain(`+  table ${prefix}scratch_archive`);

    const reversed = await h.call('viewer', 'get', `/api/v1/backups/${before}/diff/${after}`);
    expect(reversed.status).toBe(200);
    expect(reversed.body.diff).toEqual(diff);
  });
});

/** A backup's position in the change log as a number that orders: a WAL LSN, or binlog file number · 2³² + offset. */
function logNumber(position: { startLSN?: string; endLSN?: string; binlogFile?: string; binlogPos?: number }): bigint {
  if (position.binlogFile) return (BigInt(/\.(\d+)$/.exec(position.binlogFile)![1]!) << 32n) + BigInt(position.binlogPos ?? 0);
  const [high, low] = (position.endLSN || position.startLSN)!.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

const positionText = (engine: 'postgres' | 'mysql', n: bigint): string =>
  engine === 'postgres'
    ? `${(n >> 32n).toString(16).toUpperCase()}/${(n & 0xffffffffn).toString(16).toUpperCase()}`
    : `mariadb-bin.${String(n >> 32n).padStart(6, '0')}:${n & 0xffffffffn}`;

describe.each([
  { engine: 'postgres' as const, target: 'postgres-main' },
  { engine: 'mysql' as const, target: 'mysql-main' },
])('$engine change log', ({ engine, target }) => {
  it('lists the segments holding changes between the two backups, and none before or after them', async () => {
    const [before, after] = ids[engine]!;
    const position = async (id: string) => logNumber(((await h.runtime.db.backup.findUnique({ where: { id } }))!.manifest as { position: Parameters<typeof logNumber>[0] }).position);
    const [start, end] = [await position(before), await position(after)];
    expect(end).toBeGreaterThan(start);
    const segment = async (name: string, from: bigint, to: bigint) =>
      h.runtime.db.segment.create({
        data: {
          key: `diff-test/${target}/${name}`, namespace: 'default', targetName: target, chainId: 'diff-test-1', timeline: 1, name,
          startPos: positionText(engine, from), endPos: positionText(engine, to), startLsn: from, endLsn: to, sha256: '0'.repeat(64), uploadedAt: new Date(),
        },
      });
    await segment('before', start - 0x2000n, start - 0x1000n);
    await segment('spanning-from', start - 0x10n, start + 0x10n);
    await segment('between', start + 0x10n, end - 0x10n);
    await segment('after', end + 0x1000n, end + 0x2000n);
    const res = await h.call('viewer', 'get', `/api/v1/backups/${before}/diff/${after}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.segments.map((s: { name: string }) => s.name)).toEqual(['spanning-from', 'between']);
    expect(res.body.segments[1]).toMatchObject({ target: `default/${target}`, engine, startPos: positionText(engine, start + 0x10n) });
  });
});

describe('refusals', () => {
  it('answers 400 for backups of two targets and 404 for an unknown backup, with an error a person reads', async () => {
    const [pgBackup] = ids.postgres!;
    const [myBackup] = ids.mysql!;
    const mixed = await h.call('viewer', 'get', `/api/v1/backups/${pgBackup}/diff/${myBackup}`);
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toMatch(/are of different targets/);
    const unknown = await h.call('viewer', 'get', `/api/v1/backups/${pgBackup}/diff/20990101t000000z-00000000`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/Backup 20990101t000000z-00000000 was not found/);
  });
});
