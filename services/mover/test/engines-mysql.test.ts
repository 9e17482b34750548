import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureInfra } from '@sigil/local-stack';
import type { Infra } from '@sigil/local-stack';
import { createMysqlDriver, driverFor, summarizeInventory } from '../src/engines/index.ts';
import type { DatabaseAccess, DumpOptions, EngineDriver, Position } from '../src/engines/index.ts';
import { tablesOf } from '../src/engines/mysql/index.ts';
import { AlterDatabaseFilter, decodeHeader, encodeHeader, PositionSniffer, rewriteAlterDatabase } from '../src/engines/mysql-stream.ts';
import { accessFromUrl, createMysqlFixture, dropMysqlDatabase, FIXTURE, uniqueDatabaseName } from './fixtures.ts';

const ADMIN_URL = process.env.MYSQL_URL as string;
const driver: EngineDriver = driverFor('mysql');
const access: DatabaseAccess = accessFromUrl(ADMIN_URL ?? 'mysql://root@127.0.0.1:3306/');
const NO_EXCLUSIONS: DumpOptions = { excludeData: [], excludeTables: [] };

const source = uniqueDatabaseName('my_src');
const second = uniqueDatabaseName('my_src2');
const created: string[] = [source, second];
const fresh = (label: string): string => {
  const name = uniqueDatabaseName(label);
  created.push(name);
  return name;
};

async function sql<T>(a: DatabaseAccess, text: string, params: unknown[] = []): Promise<T[]> {
  const connection = await mysql.createConnection({ host: a.host, port: a.port, user: a.username, password: a.password, charset: 'UTF8MB4_UNICODE_CI' });
  try {
    const [rows] = await connection.query(text, params);
    return rows as T[];
  } finally {
    await connection.end();
  }
}

async function databaseExists(name: string, a: DatabaseAccess = access): Promise<boolean> {
  return (await sql(a, 'SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name])).length === 1;
}

async function copy(
  from: string,
  to: string,
  options: DumpOptions = NO_EXCLUSIONS,
  d: EngineDriver = driver,
  a: DatabaseAccess = access,
): Promise<{ commands: string[][]; position: Position | undefined; dumpWarnings: string[]; restoreWarnings: string[] }> {
  const dump = d.dump(a, from, options);
  const restore = d.restore(a, to);
  await Promise.all([pipeline(dump.stdout, restore.stdin), dump.done, restore.done]);
  return { commands: dump.commands, position: await dump.position, dumpWarnings: dump.warnings, restoreWarnings: restore.warnings };
}

describe('mysql engine driver', () => {
  beforeAll(async () => {
    expect(ADMIN_URL, 'the global test setup provides MYSQL_URL').toBeTruthy();
    await Promise.all([
      createMysqlFixture(ADMIN_URL, source, { largeRowBytes: 3 * 1024 * 1024, rows: 200 }),
      createMysqlFixture(ADMIN_URL, second, { largeRowBytes: 64 * 1024, rows: 10 }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(created.map((name) => dropMysqlDatabase(ADMIN_URL, name).catch(() => {})));
  });

  it('dumps and restores a database equal to its source, under another name', { timeout: 60_000 }, async () => {
    const target = fresh('my_restored');
    const { commands, dumpWarnings, restoreWarnings } = await copy(source, target);
    expect(dumpWarnings).toEqual([]);
    expect(restoreWarnings).toEqual([]);
    const argv = commands[0] ?? [];
    expect(argv[0]).toMatch(/(mariadb-dump|mysqldump)$/);
    expect(argv[1]).toBe('--no-defaults');
    expect(argv).toEqual(expect.arrayContaining(['--single-transaction', '--quick', '--routines', '--triggers', '--events', '--hex-blob']));
    expect(argv).not.toContain('--databases');
    expect(argv.at(-1)).toBe(source);

    const [before, after] = await Promise.all([driver.tableChecksums(access, source), driver.tableChecksums(access, target)]);
    expect(Object.keys(before).sort()).toEqual([...FIXTURE.mysql.tables].sort());
    expect(after).toEqual(before);
    expect(before.documents?.rows).toBe(4);
    expect(before.customers?.rows).toBe(210);

    const [invBefore, invAfter] = await Promise.all([driver.inventory(access, [source]), driver.inventory(access, [target])]);
    expect(invAfter.databases[0]?.schemaHash).toBe(invBefore.databases[0]?.schemaHash);

    // The database keeps the source's default character set and collation (carried by the dump's header) ...
    const schema = `SELECT DEFAULT_CHARACTER_SET_NAME AS cs, DEFAULT_COLLATION_NAME AS co FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?`;
    expect(await sql(access, schema, [target])).toEqual([{ cs: FIXTURE.mysql.charset, co: FIXTURE.mysql.collation }]);
    // ... its routines the collation they were created under (the dump's ALTER DATABASE lines applied to the
    // restored database, not to the source) ...
    const routines = `SELECT ROUTINE_NAME AS name, DATABASE_COLLATION AS co FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? ORDER BY 1`;
    expect(await sql(access, routines, [target])).toEqual(await sql(access, routines, [source]));
    expect(await sql(access, schema, [source])).toEqual([{ cs: FIXTURE.mysql.charset, co: FIXTURE.mysql.collation }]);
    // ... the AUTO_INCREMENT counter, the event, the trigger, the view and the function.
    const autoIncrement = `SELECT AUTO_INCREMENT AS ai FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`;
    expect(await sql<{ ai: number }>(access, autoIncrement, [target, FIXTURE.mysql.autoIncrement.table])).toEqual([{ ai: FIXTURE.mysql.autoIncrement.value }]);
    expect(await sql(access, `SELECT EVENT_NAME AS name FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ?`, [target])).toEqual([{ name: 'purge_sessions' }]);
    expect(await sql(access, `SELECT COUNT(*) AS n FROM \`${target}\`.customer_totals`)).toEqual([{ n: 210 }]);
    expect(await sql(access, `SELECT \`${target}\`.invoice_total(1) = \`${source}\`.invoice_total(1) AS same`)).toEqual([{ same: 1 }]);
    await sql(access, `INSERT INTO \`${target}\`.customers (email, name) VALUES ('new@example.com', 'new')`);
    const [inserted] = await sql<{ id: number }>(access, `SELECT id FROM \`${target}\`.customers WHERE email = 'new@example.com'`);
    expect(Number(inserted?.id)).toBe(FIXTURE.mysql.autoIncrement.value);
    expect(await sql(access, `SELECT COUNT(*) AS n FROM \`${target}\`.audit_log WHERE detail LIKE '%new@example.com%'`)).toEqual([{ n: 1 }]);
  });

  for (const ignoreTableData of [true, false]) {
    it(`excludeData keeps a table empty and excludeTables leaves one out (${ignoreTableData ? '--ignore-table-data' : 'schema-only second run'})`, { timeout: 60_000 }, async () => {
      const d = createMysqlDriver({ ignoreTableData });
      const target = fresh('my_excl');
      const { commands } = await copy(second, target, { excludeData: [FIXTURE.excludeDataTable], excludeTables: [`${second}.${FIXTURE.excludeTable}`, 'other_db.customers'] }, d);
      expect(commands).toHaveLength(ignoreTableData ? 1 : 2);
      const [before, after] = await Promise.all([d.tableChecksums(access, second), d.tableChecksums(access, target)]);
      expect(before.sessions?.rows).toBeGreaterThan(0);
      expect(after.sessions?.rows).toBe(0);
      expect(after.scratch).toBeUndefined();
      const { sessions: _s1, scratch: _x1, ...kept } = before;
      const { sessions: _s2, ...restored } = after;
      expect(restored).toEqual(kept);
    });
  }

  it('inventories tables, columns, indexes, keys, sizes and the latest migration, without row data', { timeout: 30_000 }, async () => {
    const inventory = await driver.inventory(access, [source, second], { exactCounts: { maxRows: 1_000_000, timeoutMs: 5000 } });
    expect(inventory.engine).toBe('mysql');
    expect(inventory.databases.map((d) => d.name)).toEqual([source, second]);
    const db = inventory.databases[0];
    if (!db) throw new Error('no database in the inventory');
    expect(inventory.databases[1]?.schemaHash).toBe(db.schemaHash);
    expect(inventory.schemaHash).toMatch(/^[0-9a-f]{64}$/);
    expect(db.migrationTable).toBe(FIXTURE.migrationTable);
    expect(db.migrationVersion).toBe(FIXTURE.migrationVersion);
    // The applied migrations, oldest first (the failed one is not applied); each InnoDB table's id, distinct.
    expect(db.migrations).toEqual(['20240101000000_init', FIXTURE.migrationVersion]);
    const ids = db.tables.map((t) => t.oid);
    expect(ids.every((id) => typeof id === 'number' && id > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(db.views).toEqual([...FIXTURE.mysql.views]);
    expect(db.routines).toEqual(expect.arrayContaining([expect.stringMatching(/^invoice_total\(c bigint(\(20\))? unsigned\) RETURNS decimal\(14,2\)$/)]));
    expect(db.tables.map((t) => t.name).sort()).toEqual([...FIXTURE.mysql.tables].sort());
    expect(inventory.extra?.[`${source}.collation`]).toBe(FIXTURE.mysql.collation);

    const invoices = db.tables.find((t) => t.name === 'invoices');
    expect(invoices).toMatchObject({
      primaryKey: ['id'],
      exactRows: 630,
      foreignKeys: [{ name: 'invoices_customer_fk', columns: ['customer_id'], refTable: 'customers', refColumns: ['id'] }],
    });
    expect(invoices?.indexes?.find((i) => i.name === 'invoices_customer_idx')).toMatchObject({ columns: ['customer_id', 'issued_at'], unique: false });
    expect(invoices?.columns.find((c) => c.name === 'currency')).toEqual({ name: 'currency', type: 'char(3)', nullable: false, default: "'EUR'" });
    expect(invoices?.rowsEstimate).toBeGreaterThan(0);
    expect(invoices?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const customers = db.tables.find((t) => t.name === 'customers');
    expect(customers?.indexes?.find((i) => i.name === 'customers_email')?.unique).toBe(true);
    expect(customers?.columns.find((c) => c.name === 'id')?.default).toBe('auto_increment');
    const documents = db.tables.find((t) => t.name === 'documents');
    expect(documents?.totalBytes).toBeGreaterThan(6 * 1024 * 1024);
    expect(db.sizeBytes).toBeGreaterThan(6 * 1024 * 1024);
    expect(JSON.stringify(inventory)).not.toContain('example.com');
    expect(summarizeInventory(inventory)).toMatchObject({ databases: 2, tables: db.tables.length * 2 });
  });

  it('lists databases: * without system schemas, named ones checked', { timeout: 30_000 }, async () => {
    const all = await driver.listDatabases(access, ['*']);
    expect(all).toEqual(expect.arrayContaining([source, second]));
    for (const system of ['mysql', 'information_schema', 'performance_schema', 'sys']) expect(all).not.toContain(system);
    expect(await driver.listDatabases(access, [second, source])).toEqual([second, source]);
    await expect(driver.listDatabases(access, ['strata_t_nope'])).rejects.toThrow('database "strata_t_nope" does not exist on mysql 127.0.0.1');
  });

  it('reports the server', { timeout: 30_000 }, async () => {
    const info = await driver.serverInfo(access);
    expect(info.major).toBe(Number.parseInt(info.version, 10));
    expect(info.systemID).toBeTruthy();
    expect(info.sizeBytes).toBeGreaterThan(0);
    expect(['mariadb', 'mysql']).toContain(info.settings.flavor);
    expect(Object.keys(await driver.tools())).toHaveLength(2);
  });

  it('keeps the password out of argv', { timeout: 30_000 }, async () => {
    const dump = driver.dump({ ...access, password: 'sekret-in-env-only' }, second, NO_EXCLUSIONS);
    const sink = new PassThrough();
    sink.resume();
    await Promise.all([pipeline(dump.stdout, sink).catch(() => {}), dump.done.catch(() => {})]);
    expect(JSON.stringify(dump.commands)).not.toContain('sekret-in-env-only');
  });

  it('a bad port makes the dump fail with the tool’s own message, and its stream fails too', { timeout: 30_000 }, async () => {
    const dump = driver.dump({ ...access, port: 1 }, source, NO_EXCLUSIONS);
    const sink = new PassThrough();
    sink.resume();
    const piped = pipeline(dump.stdout, sink);
    await expect(dump.done).rejects.toThrow(/^(mariadb-dump|mysqldump): Got error: 2002: .*Can't connect to (MySQL )?server on '127\.0\.0\.1'/);
    await expect(piped).rejects.toThrow(/2002/);
    expect(await dump.position).toBeUndefined();
  });

  it('a missing database makes the dump fail with a clear message', { timeout: 30_000 }, async () => {
    const dump = driver.dump(access, 'strata_t_does_not_exist', NO_EXCLUSIONS);
    dump.stdout.resume();
    await expect(dump.done).rejects.toThrow(/Unknown database 'strata_t_does_not_exist'/);
  });

  it('refuses to restore into an existing database, and leaves it alone', { timeout: 30_000 }, async () => {
    const restore = driver.restore(access, source);
    await expect(Promise.all([pipeline(Readable.from([encodeHeader({ v: 1, engine: 'mysql', database: 'x' }), Buffer.from('SELECT 1;\n')]), restore.stdin), restore.done])).rejects.toThrow(
      `database "${source}" already exists`,
    );
    expect(await databaseExists(source)).toBe(true);
    expect((await driver.tableChecksums(access, source)).customers?.rows).toBe(210);
  });

  it('a failing statement fails the restore with the client’s message and drops the new database', { timeout: 30_000 }, async () => {
    const target = fresh('my_bad');
    const restore = driver.restore(access, target);
    const dump = Readable.from([Buffer.from('CREATE TABLE t (id INT);\nINSERT INTO t VALUES (1);\nTHIS IS NOT SQL;\n')]);
    await expect(Promise.all([pipeline(dump, restore.stdin), restore.done])).rejects.toThrow(/^ERROR 1064 \(42000\) at line 3/);
    expect(await databaseExists(target)).toBe(false);
  });

  it('a dump stream cut short aborts the restore and drops the half-restored database', { timeout: 30_000 }, async () => {
    const target = fresh('my_cut');
    const dump = driver.dump(access, source, NO_EXCLUSIONS);
    const restore = driver.restore(access, target);
    let sent = 0;
    dump.stdout.on('data', (chunk: Buffer) => {
      sent += chunk.length;
      if (sent > 1024 * 1024) dump.stdout.destroy(new Error('upload failed'));
    });
    await expect(pipeline(dump.stdout, restore.stdin)).rejects.toThrow();
    await expect(restore.done).rejects.toThrow(/closed before its end|was stopped/);
    await expect(dump.done).rejects.toThrow(/was stopped/);
    expect(await databaseExists(target)).toBe(false);
  });
});

describe('mysql engine driver with binlog on', () => {
  let infra: Infra | undefined;
  let stateDir: string | undefined;
  let binlogAccess: DatabaseAccess;
  let binlogUrl: string;
  const database = uniqueDatabaseName('my_binlog');

  beforeAll(async () => {
    const [logBin] = await sql<{ on: number }>(access, 'SELECT @@log_bin AS `on`');
    if (Number(logBin?.on) === 1) {
      binlogUrl = ADMIN_URL;
    } else {
      // The server the run was given has no binlog: start our own (MariaDB with binlog on).
      stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-engines-binlog-'));
      infra = await ensureInfra({ stateDir, env: { POSTGRES_URL: process.env.POSTGRES_URL, NATS_URL: process.env.NATS_URL } });
      binlogUrl = infra.mysql.adminUrl;
    }
    binlogAccess = accessFromUrl(binlogUrl);
    await createMysqlFixture(binlogUrl, database, { rows: 20, largeRowBytes: 32 * 1024 });
  }, 120_000);

  afterAll(async () => {
    await driver.dropDatabase(binlogAccess, database).catch(() => {});
    await driver.dropDatabase(binlogAccess, `${database}_r`).catch(() => {});
    await infra?.stop();
    if (stateDir) fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it('records the consistent binlog position inside the dump', { timeout: 60_000 }, async () => {
    const before = await driver.position(binlogAccess);
    expect(before.binlogFile).toBeTruthy();
    expect(before.binlogPos).toBeGreaterThan(0);
    const { position, commands } = await copy(database, `${database}_r`, NO_EXCLUSIONS, driver, binlogAccess);
    await sql(binlogAccess, `INSERT INTO \`${database}\`.scratch (id, junk) VALUES (-1, 'after the dump')`);
    const after = await driver.position(binlogAccess);
    expect(commands[0]).toContain('--master-data=2');
    expect(position?.binlogFile).toBe(before.binlogFile);
    expect(position?.binlogPos).toBeGreaterThanOrEqual(before.binlogPos ?? 0);
    expect(position?.binlogPos).toBeLessThan(after.binlogPos ?? 0);
    if (before.gtidSet !== undefined) expect(position?.gtidSet).toMatch(/^\d+-\d+-\d+/);
    const [a, b] = await Promise.all([driver.tableChecksums(binlogAccess, database), driver.tableChecksums(binlogAccess, `${database}_r`)]);
    expect(b.customers).toEqual(a.customers);
  });
});

describe('mysql stream helpers', () => {
  it('rewrites ALTER DATABASE lines that name a database, wherever the chunks split', async () => {
    const input = [
      '-- header',
      'INSERT INTO t VALUES (1,\'ALTER DATABASE `x` CHARACTER SET latin1 ;\');',
      'ALTER DATABASE `src``db` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci ;',
      'DELIMITER ;;',
      'ALTER DATABASE `src``db` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci ;',
      'ALTER DATABASE `keep` ADD SOMETHING ELSE;',
      'ALTER DATABASE `last` CHARACTER SET latin1 COLLATE latin1_swedish_ci ;',
    ].join('\n');
    const expected = [
      '-- header',
      'INSERT INTO t VALUES (1,\'ALTER DATABASE `x` CHARACTER SET latin1 ;\');',
      'ALTER DATABASE CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci ;',
      'DELIMITER ;;',
      'ALTER DATABASE CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci ;',
      'ALTER DATABASE `keep` ADD SOMETHING ELSE;',
      'ALTER DATABASE CHARACTER SET latin1 COLLATE latin1_swedish_ci ;',
    ].join('\n');
    const bytes = Buffer.from(input);
    for (const size of [1, 2, 3, 5, 7, 16, 17, 64, bytes.length]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      const out: Buffer[] = [];
      const sink = new PassThrough();
      sink.on('data', (c: Buffer) => out.push(c));
      await pipeline(Readable.from(chunks), new AlterDatabaseFilter(), sink);
      expect(Buffer.concat(out).toString(), `chunks of ${size}`).toBe(expected);
    }
    expect(rewriteAlterDatabase('ALTER DATABASE `a` CHARACTER SET x ;')).toBe('ALTER DATABASE CHARACTER SET x ;');
    expect(rewriteAlterDatabase('ALTER DATABASE `a` UPGRADE DATA DIRECTORY NAME')).toBeUndefined();
  });

  it('reads the header and the binlog position of a dump', () => {
    const header = encodeHeader({ v: 1, engine: 'mysql', database: 'shop', charset: 'utf8mb4', collation: 'utf8mb4_unicode_ci' });
    expect(decodeHeader(Buffer.concat([header, Buffer.from('-- rest\n')]))).toEqual({ v: 1, engine: 'mysql', database: 'shop', charset: 'utf8mb4', collation: 'utf8mb4_unicode_ci' });
    expect(decodeHeader(Buffer.from('/*M!999999\\- enable the sandbox mode */\n'))).toBeUndefined();

    const sniffer = new PositionSniffer(128, 64);
    const stream = [
      "-- CHANGE MASTER TO MASTER_LOG_FILE='mariadb-bin.000042', MASTER_LOG_POS=1167;\n",
      'x'.repeat(500),
      "\n-- SET GLOBAL gtid_slave_pos='0-1-5';\n",
    ].join('');
    for (let i = 0; i < stream.length; i += 10) sniffer.push(Buffer.from(stream.slice(i, i + 10)));
    expect(sniffer.position()).toEqual({ binlogFile: 'mariadb-bin.000042', binlogPos: 1167, gtidSet: '0-1-5' });
    expect(new PositionSniffer().position()).toBeUndefined();
  });

  it('maps table names onto one database', () => {
    expect(tablesOf('shop', ['sessions', 'shop.carts', 'other.carts', 'sessions'])).toEqual(['sessions', 'carts']);
  });
});
