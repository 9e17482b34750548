import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@sigil/kit/testing';
import { startMariadb, startPostgres, type PostgresHandle } from '@sigil/local-stack';
import { startWorker, type Worker } from '@strata/mover';
import { stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { waitFor } from './wait.ts';

/**
 * Change summaries for real (issue 31): a Postgres and a MariaDB server of their own, both streamed into the store
 * by a mover in this process; the same scripted workload on each must come back from `GET …/changes` exactly as it
 * was run: the rows of each statement, the truncation, and the schema statements (MariaDB: their text; Postgres:
 * the transactions that changed the schema, its WAL holding no DDL text).
 */
const bucket = `strata-changes-${randomBytes(3).toString('hex')}`;
const stateDir = mkdtempSync(path.join(tmpdir(), 'strata-changes-'));
let postgres: PostgresHandle;
let mariadb: { adminUrl: string; port: number; stop(): Promise<void> };
let h: CatalogHarness;
let worker: Worker;
let ticker: NodeJS.Timeout;

const SCRIPT = {
  createTable: 'CREATE TABLE orders (id INT PRIMARY KEY, note TEXT)',
  insert12: "INSERT INTO orders (id, note) VALUES (1,'a'),(2,'b'),(3,'c'),(4,'d'),(5,'e'),(6,'f'),(7,'g'),(8,'h'),(9,'i'),(10,'j'),(11,'k'),(12,'l')",
  update5: "UPDATE orders SET note = 'u' WHERE id <= 5",
  delete2: 'DELETE FROM orders WHERE id > 10',
  /** Rolled back: counts nothing. */
  rolledBack: ['BEGIN', "INSERT INTO orders (id, note) VALUES (99, 'never')", 'ROLLBACK'],
  addColumn: 'ALTER TABLE orders ADD COLUMN tier TEXT',
  truncate: 'TRUNCATE TABLE orders',
};
const STATEMENTS = Object.values(SCRIPT).flat();
/** What commits: every statement but the rolled back transaction. */
const COMMITTED = STATEMENTS.length - SCRIPT.rolledBack.length;

interface Changes {
  tables: Record<string, { inserts: number; updates: number; deletes: number; truncates: number }>;
  segments: Array<{ name: string; ddl: string[]; schemaChanges?: number; explanation?: string; summaryError?: string; commits: number }>;
}

/** The changes since `since`: the workload's only (the servers' own setup, initdb's WAL included, came before it). */
async function changes(target: string, since: Date): Promise<Changes> {
  const res = await h.call('viewer', 'get', `/api/v1/targets/default/${target}/changes?since=${since.toISOString()}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Changes;
}

async function streaming(target: string): Promise<true | undefined> {
  const row = await h.runtime.db.resource.findFirst({ where: { kind: 'BackupTarget', namespace: 'default', name: target } });
  return (row?.status as { pitr?: { streamerReady?: boolean } } | undefined)?.pitr?.streamerReady ? true : undefined;
}

/** The summaries once the truncation (the script's last statement) is in one: the whole script is then. */
async function changesOfScript(target: string, table: string, since: Date): Promise<Changes> {
  return waitFor(`the summary of the script on ${target}`, async () => {
    const answer = await changes(target, since);
    return answer.tables[table]?.truncates ? answer : undefined;
  }, 60_000);
}

beforeAll(async () => {
  [postgres, mariadb] = await Promise.all([
    startPostgres({ stateDir: path.join(stateDir, 'pg'), env: process.env, durable: false, log: () => {} }),
    startMariadb({ stateDir: path.join(stateDir, 'my'), env: process.env, log: () => {} }),
  ]);
  const admin = new pg.Client({ connectionString: postgres.adminUrl });
  await admin.connect();
  await admin.query('CREATE DATABASE shop');
  await admin.query('SELECT pg_switch_wal()'); // the setup in files of its own: a summary covers its whole file
  await admin.end();
  const root = await mysql.createConnection({ host: '127.0.0.1', port: mariadb.port, user: 'root' });
  await root.query('CREATE DATABASE shop');
  await root.query('FLUSH BINARY LOGS');
  await root.end();

  const keys = mkdtempSync(path.join(tmpdir(), 'strata-age-'));
  execFileSync('age-keygen', ['-o', path.join(keys, 'identity.txt')], { stdio: 'ignore' });
  const identity = readFileSync(path.join(keys, 'identity.txt'), 'utf8');
  const recipient = execFileSync('age-keygen', ['-y', path.join(keys, 'identity.txt')]).toString().trim();
  rmSync(keys, { recursive: true, force: true });
  h = await startCatalogHarness('changes');
  worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 3, consumerPrefix: h.cell, retryDelaysMs: [500, 1000] });
  const docs = stackDocuments({
    bucket,
    recipients: [recipient],
    identity,
    postgres: { host: '127.0.0.1', port: postgres.port, username: 'postgres' },
    mysql: { host: '127.0.0.1', port: mariadb.port, username: 'root' },
    databases: { postgres: ['shop'], mysql: ['shop'] },
    pitr: { enabled: true, partialInterval: '2s' },
  });
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await h.runtime.mirror(); // creates the bucket
  ticker = setInterval(() => void h.runtime.tick(), 500);
  await waitFor('both streamers', async () => ((await streaming('postgres-main')) && (await streaming('mysql-main')) ? true : undefined), 90_000);
}, 300_000);

afterAll(async () => {
  clearInterval(ticker);
  await worker?.stop();
  await h?.close();
  await Promise.all([postgres?.stop(), mariadb?.stop()]);
  rmSync(stateDir, { recursive: true, force: true });
}, 120_000);

describe('change summaries', () => {
  it('MariaDB: the rows of each statement by table, the truncation, and the DDL statements exactly, in order', async () => {
    const shop = await mysql.createConnection({ host: '127.0.0.1', port: mariadb.port, user: 'root', database: 'shop' });
    const began = new Date();
    for (const statement of STATEMENTS) await shop.query(statement);
    await shop.end();
    const answer = await changesOfScript('mysql-main', 'shop.orders', began);
    expect(answer.tables).toEqual({ 'shop.orders': { inserts: 12, updates: 5, deletes: 2, truncates: 1 } });
    expect(answer.segments.flatMap((s) => s.ddl)).toEqual([SCRIPT.createTable, SCRIPT.addColumn]);
    expect(answer.segments.every((s) => !s.summaryError)).toBe(true);
    expect(answer.segments.reduce((n, s) => n + s.commits, 0)).toBe(COMMITTED);
    const explained = answer.segments.map((s) => s.explanation).join('; ');
    expect(explained).toContain(SCRIPT.addColumn);
    expect(explained).toContain('12 inserts into shop.orders');
  }, 120_000);

  it('Postgres: the committed rows of each statement by table, the truncation, and the two schema changes', async () => {
    const shop = new pg.Client({ connectionString: postgres.adminUrl.replace(/\/postgres$/, '/shop') });
    await shop.connect();
    const began = new Date();
    for (const statement of STATEMENTS) await shop.query(statement);
    await shop.end();
    const answer = await changesOfScript('postgres-main', 'shop.public.orders', began);
    expect(answer.tables).toEqual({ 'shop.public.orders': { inserts: 12, updates: 5, deletes: 2, truncates: 1 } });
    expect(answer.segments.reduce((n, s) => n + (s.schemaChanges ?? 0), 0)).toBe(2); // CREATE TABLE, ALTER TABLE
    expect(answer.segments.flatMap((s) => s.ddl)).toEqual([]);
    expect(answer.segments.every((s) => !s.summaryError)).toBe(true);
    const explained = answer.segments.map((s) => s.explanation).join('; ');
    expect(explained).toContain('12 inserts into shop.orders');
    expect(explained).toContain('1 truncate of shop.orders');
  }, 120_000);

  it('validates the range it is asked for', async () => {
    const bad = await h.call('viewer', 'get', '/api/v1/targets/default/mysql-main/changes?since=2026-13-45T00:00:00Z');
    expect(bad.status).toBe(400);
    const reversed = await h.call('viewer', 'get', '/api/v1/targets/default/mysql-main/changes?since=2030-01-02T00:00:00Z&until=2030-01-01T00:00:00Z');
    expect(reversed.status).toBe(400);
    expect(JSON.stringify(reversed.body)).toContain('is after until');
    const missing = await h.call('viewer', 'get', '/api/v1/targets/default/nope/changes');
    expect(missing.status).toBe(404);
  });
});
