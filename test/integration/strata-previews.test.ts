import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingLogger } from '@sigil/kit/testing';
import { startMariadb } from '@sigil/local-stack';
import { startWorker, type Worker } from '@strata/mover';
import { s3Env, stackDocuments, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { createS3Client, listKeys } from '@strata/stream';
import { waitFor } from './wait.ts';

/**
 * Masked row previews for real (issue 31): a MariaDB server of its own streamed by a mover in this process, a target
 * masking `email` and `ssn`. The previews come back masked, cut and limited; then every byte the system wrote (the
 * catalog's database, every object in the store, the mover's and the catalog's logs, the API and GraphQL answers) is
 * searched for the planted secrets, and the previews object decrypted with the catalog's identity holds `***`.
 */
const SECRET = 'planted-secret-7f3a@example.com';
const SSN = 'ssn-secret-9c1d-55';
const SECRETS = [SECRET, SSN];
const LONG = 'a long note, longer than the forty characters of maxValueLength';
const bucket = `strata-previews-${randomBytes(3).toString('hex')}`;
const stateDir = mkdtempSync(path.join(tmpdir(), 'strata-previews-'));
const keys = mkdtempSync(path.join(tmpdir(), 'strata-previews-age-'));
let mariadb: { adminUrl: string; port: number; stop(): Promise<void> };
let h: CatalogHarness;
let worker: Worker;
let ticker: NodeJS.Timeout;
const moverLog = capturingLogger('mover');
const catalogLog = capturingLogger('catalog');

function ageKey(name: string): { identity: string; recipient: string; file: string } {
  const file = path.join(keys, `${name}.txt`);
  execFileSync('age-keygen', ['-o', file], { stdio: 'ignore' });
  return { identity: readFileSync(file, 'utf8'), recipient: execFileSync('age-keygen', ['-y', file]).toString().trim(), file };
}
const owner = ageKey('owner');
const catalogKey = ageKey('catalog');

interface Row { [column: string]: string | null }
interface PreviewsAnswer { segment: string; previews: { tables: Record<string, { inserts: Row[]; updates: Array<{ before: Row; after: Row }>; deletes: Row[] }> } }

/** Where a secret shows in some text, or undefined: the report names the secret, never the haystack. */
function leaks(where: string, text: string): string[] {
  return SECRETS.filter((secret) => text.includes(secret)).map((secret) => `${secret} in ${where}`);
}

beforeAll(async () => {
  mariadb = await startMariadb({ stateDir: path.join(stateDir, 'my'), env: process.env, log: () => {} });
  const root = await mysql.createConnection({ host: '127.0.0.1', port: mariadb.port, user: 'root' });
  await root.query('CREATE DATABASE shop');
  await root.query('FLUSH BINARY LOGS');
  await root.end();
  h = await startCatalogHarness('previews', { log: catalogLog.log });
  worker = await startWorker({ bus: h.bus, log: moverLog.log, secretsKey: h.secretsKey, concurrency: 3, consumerPrefix: h.cell, retryDelaysMs: [500, 1000] });
  const docs = stackDocuments({
    bucket,
    recipients: [owner.recipient],
    catalogRecipients: [catalogKey.recipient],
    identity: catalogKey.identity,
    mysql: { host: '127.0.0.1', port: mariadb.port, username: 'root' },
    databases: { mysql: ['shop'] },
    pitr: { enabled: true, partialInterval: '2s' },
    mask: ['email', 'ssn'],
    previews: { rows: 3, maxValueLength: 40 },
  });
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await h.runtime.mirror(); // creates the bucket
  ticker = setInterval(() => void h.runtime.tick(), 500);
  await waitFor('the streamer', async () => {
    const row = await h.runtime.db.resource.findFirst({ where: { kind: 'BackupTarget', namespace: 'default', name: 'mysql-main' } });
    return (row?.status as { pitr?: { streamerReady?: boolean } } | undefined)?.pitr?.streamerReady ? true : undefined;
  }, 90_000);
}, 300_000);

afterAll(async () => {
  clearInterval(ticker);
  await worker?.stop();
  await h?.close();
  await mariadb?.stop();
  rmSync(stateDir, { recursive: true, force: true });
  rmSync(keys, { recursive: true, force: true });
}, 120_000);

describe('masked row previews (MariaDB)', () => {
  let answer: PreviewsAnswer;
  let segment: string;
  const answers: string[] = [];

  it('answers sample rows of each kind, masked columns ***, the others in clear, values cut, at most `rows` of each', async () => {
    const shop = await mysql.createConnection({ host: '127.0.0.1', port: mariadb.port, user: 'root', database: 'shop' });
    const began = new Date();
    await shop.query('CREATE TABLE customers (id INT PRIMARY KEY, email VARCHAR(200), ssn VARCHAR(40), name TEXT, note TEXT)');
    await shop.query('INSERT INTO customers VALUES (1, ?, ?, ?, ?), (2, ?, ?, ?, NULL), (3, ?, ?, ?, NULL), (4, ?, ?, ?, NULL), (5, ?, ?, ?, NULL)', [
      SECRET, SSN, 'Ann', LONG, 'bo@example.com', '000-00-0002', 'Bo', 'cy@example.com', '000-00-0003', 'Cy', 'di@example.com', '000-00-0004', 'Di', 'ed@example.com', '000-00-0005', 'Ed',
    ]);
    await shop.query("UPDATE customers SET name = CONCAT(name, '!') WHERE id <= 4");
    await shop.query('DELETE FROM customers WHERE id >= 4');
    await shop.end();
    const changes = await waitFor('the workload in a segment', async () => {
      const res = await h.call('viewer', 'get', `/api/v1/targets/default/mysql-main/changes?since=${began.toISOString()}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body as { tables: Record<string, { deletes: number }> }).tables['shop.customers']?.deletes === 2 ? res : undefined;
    }, 60_000);
    answers.push(JSON.stringify(changes.body));
    const segments = (changes.body as { segments: Array<{ name: string; tables: Record<string, unknown>; previewsKey?: string; previewRows?: number }> }).segments;
    const withRows = segments.filter((s) => s.tables['shop.customers']);
    expect(withRows).toHaveLength(1); // the script is in one binlog file
    segment = withRows[0]!.name;
    expect(withRows[0]).toMatchObject({ previewsKey: expect.stringMatching(/\.previews\.age$/), previewRows: 8 });

    const res = await h.call('restorer', 'get', `/api/v1/targets/default/mysql-main/segments/${segment}/previews`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    answers.push(JSON.stringify(res.body));
    answer = res.body as PreviewsAnswer;
    expect(answer.segment).toBe(segment);
    expect(Object.keys(answer.previews.tables)).toEqual(['shop.customers']);
    const customers = answer.previews.tables['shop.customers']!;
    expect(customers.inserts).toEqual([
      { id: '1', email: '***', ssn: '***', name: 'Ann', note: `${LONG.slice(0, 40)}…` },
      { id: '2', email: '***', ssn: '***', name: 'Bo', note: null },
      { id: '3', email: '***', ssn: '***', name: 'Cy', note: null },
    ]);
    expect(customers.updates).toHaveLength(3);
    expect(customers.updates[0]).toEqual({ before: { id: '1', email: '***', ssn: '***', name: 'Ann', note: `${LONG.slice(0, 40)}…` }, after: { id: '1', email: '***', ssn: '***', name: 'Ann!', note: `${LONG.slice(0, 40)}…` } });
    expect(customers.deletes).toEqual([
      { id: '4', email: '***', ssn: '***', name: 'Di!', note: null },
      { id: '5', email: '***', ssn: '***', name: 'Ed', note: null },
    ]);
  }, 120_000);

  it('says why there are none: an unknown segment, and the viewer role may not read them', async () => {
    const missing = await h.call('restorer', 'get', '/api/v1/targets/default/mysql-main/segments/mariadb-bin.999999/previews');
    expect(missing.status).toBe(404);
    expect(JSON.stringify(missing.body)).toContain('Segment mariadb-bin.999999 of target default/mysql-main was not found');
    const viewer = await h.call('viewer', 'get', `/api/v1/targets/default/mysql-main/segments/${segment}/previews`);
    expect(viewer.status).toBe(403);
  });

  it('never lets a masked value out in clear: catalog database, store objects, logs, API and GraphQL answers', async () => {
    const found: string[] = [];
    // The catalog's database: every table, every row, as text (bytea columns also as hex).
    const db = new pg.Client({ connectionString: h.databaseUrl });
    await db.connect();
    try {
      const tables = (await db.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'")).rows;
      expect(tables.map((t) => t.name)).toContain('segments');
      for (const { name } of tables) {
        const rows = (await db.query<{ r: string }>(`SELECT row_to_json(t)::text AS r FROM "${name}" t`)).rows;
        const text = rows.map((r) => r.r).join('\n');
        found.push(...leaks(`table ${name}`, text), ...leaks(`table ${name} (hex)`, text.replaceAll('\\\\x', '')));
        if (name === 'segments') expect(text).toContain('.previews.age');
      }
    } finally {
      await db.end();
    }
    // Every object in the store (encrypted: a secret must not show in any byte).
    const s3 = s3Env();
    const client = createS3Client({ endpoint: s3.endpoint, region: s3.region, pathStyle: true, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey });
    let previewsObject: Buffer | undefined;
    let objects = 0;
    for await (const key of listKeys(client, bucket, '')) {
      const chunks: Buffer[] = [];
      for await (const chunk of await client.getObject(bucket, key)) chunks.push(chunk as Buffer);
      const bytes = Buffer.concat(chunks);
      objects += 1;
      found.push(...leaks(`object ${key}`, bytes.toString('latin1')));
      if (key.endsWith(`${segment}.zst.age.previews.age`) || (key.includes(`/${segment}`) && key.endsWith('.previews.age'))) previewsObject = bytes;
    }
    expect(objects).toBeGreaterThan(2);
    expect(previewsObject).toBeDefined();
    // The previews object opens with the catalog's own identity (catalogRecipients), and holds *** for the masked columns.
    const encrypted = path.join(keys, 'previews.age');
    writeFileSync(encrypted, previewsObject!);
    const plain = execFileSync('age', ['-d', '-i', catalogKey.file, encrypted]).toString('utf8');
    found.push(...leaks('the decrypted previews object', plain));
    // The API and GraphQL answers about the segment.
    for (const url of ['/api/v1/targets/default/mysql-main/segments', '/api/v1/segments', '/api/v1/targets/default/mysql-main']) {
      const res = await h.call('viewer', 'get', url);
      expect(res.status, url).toBe(200);
      answers.push(JSON.stringify(res.body));
      if (url === '/api/v1/targets/default/mysql-main') expect(res.body.status.conditions).toContainEqual(expect.objectContaining({ type: 'Previews', status: 'True', reason: 'PreviewsOn' }));
    }
    const graph = await h.call('viewer', 'post', '/graphql', { query: '{ strataTarget(namespace: "default", name: "mysql-main") { name segments { name explanation commits } } }' });
    expect(graph.status).toBe(200);
    expect(JSON.stringify(graph.body)).toContain(segment);
    answers.push(JSON.stringify(graph.body));
    found.push(...answers.flatMap((text, i) => leaks(`API answer ${i}`, text)));
    // The mover's and the catalog's logs (they did log: the search is not of nothing).
    expect(moverLog.text().length).toBeGreaterThan(0);
    found.push(...leaks("the mover's log", moverLog.text()), ...leaks("the catalog's log", catalogLog.text()));
    expect(found).toEqual([]);
    expect(JSON.parse(plain).tables['shop.customers'].inserts[0]).toMatchObject({ email: '***', ssn: '***', name: 'Ann' });
  }, 120_000);
});
