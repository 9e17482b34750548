import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingLogger } from '@sigil/kit/testing';
import { startPostgres } from '@sigil/local-stack';
import { startWorker, type Worker } from '@strata/mover';
import { s3Env, stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { createS3Client, listKeys } from '@strata/stream';
import { waitFor } from './wait.ts';

/**
 * Masked row previews of Postgres (issue 31), for real: a Postgres server of its own (wal_level=logical, as the stack
 * runs it) streamed by a mover in this process, a target with `previews.logical` masking `email` and `ssn`. The
 * previews come back masked, cut and limited, named by the columns as of the change; no byte the system wrote holds
 * a planted secret; the logical slot and its publication go when previews are turned off, when change capture is
 * turned off and when the target is deleted; a server with wal_level=replica gets a condition naming the setting.
 */
const SECRET = 'pg-planted-secret-41ce@example.com';
const SSN = 'pg-ssn-secret-0b7e-31';
const SECRETS = [SECRET, SSN];
const LONG = 'a long note, longer than the forty characters of maxValueLength';
const bucket = `strata-pg-previews-${randomBytes(3).toString('hex')}`;
const stateDir = mkdtempSync(path.join(tmpdir(), 'strata-pg-previews-'));
const keys = mkdtempSync(path.join(tmpdir(), 'strata-pg-previews-age-'));
type Server = { adminUrl: string; port: number; stop(): Promise<void> };
let logical: Server;
let replica: Server;
let h: CatalogHarness;
let worker: Worker;
let ticker: NodeJS.Timeout;
const moverLog = capturingLogger('mover');
const catalogLog = capturingLogger('catalog');

function ageKey(name: string): { identity: string; recipient: string } {
  const file = path.join(keys, `${name}.txt`);
  execFileSync('age-keygen', ['-o', file], { stdio: 'ignore' });
  return { identity: readFileSync(file, 'utf8'), recipient: execFileSync('age-keygen', ['-y', file]).toString().trim() };
}
const owner = ageKey('owner');
const catalogKey = ageKey('catalog');

interface Row { [column: string]: string | null }
interface TablePreviews { inserts: Row[]; updates: Array<{ before: Row; after: Row }>; deletes: Row[] }
interface Segment { name: string; tables: Record<string, { inserts?: number; updates?: number; deletes?: number }>; previewsKey?: string; previewRows?: number; previewsError?: string }

async function sql(server: Server, database: string, ...statements: string[]): Promise<void> {
  const url = new URL(server.adminUrl);
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The server's replication slots and the `shop` database's publications, by name. */
async function slotsAndPublications(): Promise<{ slots: string[]; publications: string[] }> {
  const url = new URL(logical.adminUrl);
  url.pathname = '/shop';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const slots = (await client.query<{ n: string }>('SELECT slot_name AS n FROM pg_replication_slots ORDER BY 1')).rows.map((r) => r.n);
    const publications = (await client.query<{ n: string }>('SELECT pubname AS n FROM pg_publication ORDER BY 1')).rows.map((r) => r.n);
    return { slots, publications };
  } finally {
    await client.end();
  }
}

const logicalSlots = (slots: string[]) => slots.filter((s) => /_l\d+$/.test(s));

async function target(name: string): Promise<{ status: { conditions?: Array<{ type: string; status: string; reason: string; message: string }>; pitr?: { streamerReady?: boolean; streamId?: string } } }> {
  const res = await h.call('viewer', 'get', `/api/v1/targets/default/${name}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as never;
}

async function apply(yaml: string): Promise<void> {
  const res = await h.call('restorer-admin', 'post', '/api/v1/resources', yaml, 'application/yaml');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

const documents = (previews: object, pitr?: { enabled: boolean }) =>
  stackDocuments({
    bucket,
    recipients: [owner.recipient],
    catalogRecipients: [catalogKey.recipient],
    identity: catalogKey.identity,
    postgres: { host: '127.0.0.1', port: logical.port, username: 'postgres' },
    databases: { postgres: ['shop'] },
    pitr: { enabled: true, partialInterval: '2s' },
    mask: ['email', 'ssn'],
    previews,
  }).replace('  policy: nightly', `${pitr ? `  pitr: ${JSON.stringify(pitr)}\n` : ''}  policy: nightly`);

beforeAll(async () => {
  [logical, replica] = await Promise.all([
    startPostgres({ stateDir: path.join(stateDir, 'logical'), env: {}, log: () => {}, durable: false }),
    startPostgres({ stateDir: path.join(stateDir, 'replica'), env: {}, log: () => {}, durable: false, settings: { wal_level: 'replica' } }),
  ]);
  await sql(logical, 'postgres', 'CREATE DATABASE shop');
  h = await startCatalogHarness('pgpreviews', { log: catalogLog.log });
  worker = await startWorker({ bus: h.bus, log: moverLog.log, secretsKey: h.secretsKey, concurrency: 4, consumerPrefix: h.cell, retryDelaysMs: [500, 1000] });
  await apply(documents({ logical: true, rows: 3, maxValueLength: 40 }));
  await h.runtime.mirror(); // creates the bucket
  ticker = setInterval(() => void h.runtime.tick(), 500);
  await waitFor('the streamer with its logical slot', async () => ((await target('postgres-main')).status.pitr?.streamerReady && logicalSlots((await slotsAndPublications()).slots).length === 1 ? true : undefined), 90_000);
}, 300_000);

afterAll(async () => {
  clearInterval(ticker);
  await worker?.stop();
  await h?.close();
  await Promise.all([logical?.stop(), replica?.stop()]);
  rmSync(stateDir, { recursive: true, force: true });
  rmSync(keys, { recursive: true, force: true });
}, 120_000);

describe('masked row previews (Postgres, logical decoding)', () => {
  let segment: string;
  const answers: string[] = [];

  it('answers sample rows of each kind by column name, masked ***, cut, at most `rows`; before images as the replica identity logs them', async () => {
    const { slots, publications } = await slotsAndPublications();
    expect(publications).toEqual([slots.find((s) => !/_l\d+$/.test(s))]);
    const began = new Date();
    await sql(
      logical,
      'shop',
      'CREATE TABLE customers (id int PRIMARY KEY, email text, ssn text, name text, note text)',
      'ALTER TABLE customers REPLICA IDENTITY FULL',
      'CREATE TABLE orders (id int PRIMARY KEY, total numeric)',
      `BEGIN; INSERT INTO customers VALUES (1, '${SECRET}', '${SSN}', 'Ann', '${LONG}'), (2, 'bo@example.com', '000-00-0002', 'Bo', NULL), (3, 'cy@example.com', '000-00-0003', 'Cy', NULL), (4, 'di@example.com', '000-00-0004', 'Di', NULL), (5, 'ed@example.com', '000-00-0005', 'Ed', NULL);
       UPDATE customers SET name = name || '!' WHERE id <= 4;
       DELETE FROM customers WHERE id >= 4;
       INSERT INTO orders VALUES (1, 9.5), (2, 12);
       UPDATE orders SET total = 10 WHERE id = 1;
       DELETE FROM orders WHERE id = 2; COMMIT`,
    );
    const changes = await waitFor('the workload in a segment with previews', async () => {
      const res = await h.call('viewer', 'get', `/api/v1/targets/default/postgres-main/changes?since=${began.toISOString()}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const found = (res.body as { segments: Segment[] }).segments.find((s) => s.tables['shop.public.customers']?.deletes === 2 && s.previewsKey);
      return found ? res : undefined;
    }, 60_000);
    answers.push(JSON.stringify(changes.body));
    const withRows = (changes.body as { segments: Segment[] }).segments.filter((s) => s.tables['shop.public.customers']);
    expect(withRows).toHaveLength(1);
    segment = withRows[0]!.name;
    expect(withRows[0]).toMatchObject({ previewsKey: expect.stringMatching(/\.previews\.age$/), previewRows: 8 + 4 });

    const res = await h.call('restorer', 'get', `/api/v1/targets/default/postgres-main/segments/${segment}/previews`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    answers.push(JSON.stringify(res.body));
    const { tables } = (res.body as { previews: { tables: Record<string, TablePreviews> } }).previews;
    expect(Object.keys(tables)).toEqual(['shop.public.customers', 'shop.public.orders']);
    const cut = `${LONG.slice(0, 40)}…`;
    expect(tables['shop.public.customers']).toEqual({
      inserts: [
        { id: '1', email: '***', ssn: '***', name: 'Ann', note: cut },
        { id: '2', email: '***', ssn: '***', name: 'Bo', note: null },
        { id: '3', email: '***', ssn: '***', name: 'Cy', note: null },
      ],
      updates: [
        { before: { id: '1', email: '***', ssn: '***', name: 'Ann', note: cut }, after: { id: '1', email: '***', ssn: '***', name: 'Ann!', note: cut } },
        { before: { id: '2', email: '***', ssn: '***', name: 'Bo', note: null }, after: { id: '2', email: '***', ssn: '***', name: 'Bo!', note: null } },
        { before: { id: '3', email: '***', ssn: '***', name: 'Cy', note: null }, after: { id: '3', email: '***', ssn: '***', name: 'Cy!', note: null } },
      ],
      // In the order the server deleted them: row 5 still where it was inserted, row 4 where its update put it.
      deletes: [
        { id: '5', email: '***', ssn: '***', name: 'Ed', note: null },
        { id: '4', email: '***', ssn: '***', name: 'Di!', note: null },
      ],
    });
    // The default replica identity logs no old row for an update that keeps the key, and only the key of a deleted row.
    expect(tables['shop.public.orders']).toEqual({ inserts: [{ id: '1', total: '9.5' }, { id: '2', total: '12' }], updates: [{ before: {}, after: { id: '1', total: '10' } }], deletes: [{ id: '2' }] });
    expect((await target('postgres-main')).status.conditions).toContainEqual(expect.objectContaining({ type: 'Previews', status: 'True', reason: 'PreviewsOn' }));
  }, 120_000);

  it('never lets a masked value out in clear: catalog database, store objects, logs, API answers', async () => {
    const found: string[] = [];
    const leaks = (where: string, text: string) => SECRETS.filter((secret) => text.includes(secret)).map((secret) => `${secret} in ${where}`);
    const db = new pg.Client({ connectionString: h.databaseUrl });
    await db.connect();
    try {
      for (const { name } of (await db.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'")).rows) {
        const text = (await db.query<{ r: string }>(`SELECT row_to_json(t)::text AS r FROM "${name}" t`)).rows.map((r) => r.r).join('\n');
        found.push(...leaks(`table ${name}`, text));
      }
    } finally {
      await db.end();
    }
    const s3 = s3Env();
    const client = createS3Client({ endpoint: s3.endpoint, region: s3.region, pathStyle: true, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey });
    let previewsObjects = 0;
    for await (const key of listKeys(client, bucket, '')) {
      const chunks: Buffer[] = [];
      for await (const chunk of await client.getObject(bucket, key)) chunks.push(chunk as Buffer);
      found.push(...leaks(`object ${key}`, Buffer.concat(chunks).toString('latin1')));
      if (key.endsWith('.previews.age')) previewsObjects += 1;
    }
    expect(previewsObjects).toBeGreaterThan(0);
    const graph = await h.call('viewer', 'post', '/graphql', { query: '{ strataTarget(namespace: "default", name: "postgres-main") { name segments { name explanation commits } } }' });
    expect(graph.status).toBe(200);
    expect(JSON.stringify(graph.body)).toContain(segment);
    answers.push(JSON.stringify(graph.body));
    for (const url of ['/api/v1/targets/default/postgres-main/segments', '/api/v1/segments', '/api/v1/targets/default/postgres-main']) {
      const res = await h.call('viewer', 'get', url);
      expect(res.status, url).toBe(200);
      answers.push(JSON.stringify(res.body));
    }
    expect(moverLog.text().length).toBeGreaterThan(0);
    found.push(...answers.flatMap((text, i) => leaks(`API answer ${i}`, text)), ...leaks("the mover's log", moverLog.text()), ...leaks("the catalog's log", catalogLog.text()));
    expect(found).toEqual([]);
  }, 120_000);

  it('drops the logical slot and its publication when previews are turned off, and makes them again when turned on', async () => {
    await apply(documents({ enabled: false, logical: true }));
    await waitFor('the logical slot dropped', async () => {
      const { slots, publications } = await slotsAndPublications();
      return logicalSlots(slots).length === 0 && publications.length === 0 && slots.length === 1 ? true : undefined;
    }, 60_000);
    await apply(documents({ logical: true, rows: 3, maxValueLength: 40 }));
    await waitFor('the logical slot again', async () => (logicalSlots((await slotsAndPublications()).slots).length === 1 ? true : undefined), 60_000);
  }, 150_000);

  it('drops it when previews stay asked for but logical decoding is turned off, and says why there are none', async () => {
    await apply(documents({ enabled: true, logical: false }));
    await waitFor('the logical slot dropped', async () => (logicalSlots((await slotsAndPublications()).slots).length === 0 ? true : undefined), 60_000);
    const condition = await waitFor('the Previews condition', async () => (await target('postgres-main')).status.conditions?.find((c) => c.type === 'Previews' && c.reason === 'LogicalDecodingOff'), 30_000);
    expect(condition).toMatchObject({ status: 'False', message: expect.stringContaining('previews.logical: true') });
    await apply(documents({ logical: true, rows: 3, maxValueLength: 40 }));
    await waitFor('the logical slot again', async () => (logicalSlots((await slotsAndPublications()).slots).length === 1 ? true : undefined), 60_000);
  }, 150_000);

  it('drops it when change capture is turned off on the target', async () => {
    await apply(documents({ logical: true }, { enabled: false }));
    await waitFor('the logical slot dropped', async () => (logicalSlots((await slotsAndPublications()).slots).length === 0 ? true : undefined), 60_000);
    await apply(documents({ logical: true, rows: 3, maxValueLength: 40 }));
    await waitFor('the logical slot again', async () => (logicalSlots((await slotsAndPublications()).slots).length === 1 ? true : undefined), 60_000);
  }, 150_000);

  it('says which setting is missing on a server without logical decoding, as a condition of the target', async () => {
    await apply(`apiVersion: backups.strata.dev/v1alpha1
kind: BackupTarget
metadata: { name: postgres-replica, namespace: default }
spec:
  engine: postgres
  endpoint: { host: 127.0.0.1, port: ${replica.port} }
  credentials: { secretRef: { name: postgres-credentials } }
  policy: nightly
  previews: { logical: true }`);
    const condition = await waitFor('the Previews condition', async () => (await target('postgres-replica')).status.conditions?.find((c) => c.type === 'Previews' && c.reason === 'WalLevelNotLogical'), 90_000);
    expect(condition).toMatchObject({ status: 'False' });
    expect(condition.message).toContain('wal_level is replica');
    expect(condition.message).toContain("wal_level = 'logical'");
    const res = await h.call('restorer-admin', 'delete', '/api/v1/resources/BackupTarget/default/postgres-replica');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }, 150_000);

  it('drops every slot of a deleted target', async () => {
    const res = await h.call('restorer-admin', 'delete', '/api/v1/resources/BackupTarget/default/postgres-main');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await waitFor('no slot left', async () => {
      const { slots, publications } = await slotsAndPublications();
      return slots.length === 0 && publications.length === 0 ? true : undefined;
    }, 60_000);
  }, 90_000);
});
