import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrate, recreateDatabase } from '../src/db/migrate.ts';
import { testPostgresAdminUrl } from '../src/testing.ts';

async function migrationsDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
  for (const [name, sql] of Object.entries(files)) {
    await mkdir(path.join(dir, name));
    await writeFile(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

describe('migration runner', () => {
  it('applies in order once, keeps Prisma bookkeeping, and refuses edited migrations', async () => {
    const url = await recreateDatabase(testPostgresAdminUrl(), 'sigil_kit_test_migrate');
    const dir = await migrationsDir({
      '20260101000000_first': 'CREATE TABLE a (id int primary key);',
      '20260102000000_second': 'ALTER TABLE a ADD COLUMN name text;',
    });
    expect(await migrate(url, dir)).toEqual({ applied: ['20260101000000_first', '20260102000000_second'], alreadyApplied: [] });
    expect(await migrate(url, dir)).toEqual({ applied: [], alreadyApplied: ['20260101000000_first', '20260102000000_second'] });

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query('SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name');
    await client.end();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ migration_name: '20260101000000_first', applied_steps_count: 1 });
    expect(rows[0].checksum).toMatch(/^[0-9a-f]{64}$/);

    await writeFile(path.join(dir, '20260102000000_second', 'migration.sql'), 'ALTER TABLE a ADD COLUMN other text;');
    await expect(migrate(url, dir)).rejects.toThrow(/modified after it was applied/);
  });

  it('rolls back a failing migration and records nothing', async () => {
    const url = await recreateDatabase(testPostgresAdminUrl(), 'sigil_kit_test_migrate_fail');
    const dir = await migrationsDir({ '20260101000000_bad': 'CREATE TABLE b (id int); SELECT no_such_function();' });
    await expect(migrate(url, dir)).rejects.toThrow(/20260101000000_bad failed/);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const tables = await client.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'b'`);
    const recorded = await client.query('SELECT 1 FROM _prisma_migrations');
    await client.end();
    expect(tables.rowCount).toBe(0);
    expect(recorded.rowCount).toBe(0);
  });

  it('serialises concurrent runners', async () => {
    const url = await recreateDatabase(testPostgresAdminUrl(), 'sigil_kit_test_migrate_race');
    const dir = await migrationsDir({ '20260101000000_only': 'CREATE TABLE c (id int);' });
    const results = await Promise.all([migrate(url, dir), migrate(url, dir), migrate(url, dir)]);
    expect(results.flatMap((r) => r.applied)).toEqual(['20260101000000_only']);
  });
});
