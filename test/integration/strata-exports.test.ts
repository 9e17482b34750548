import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@sigil/kit/testing';
import { startWorker, type Worker } from '@strata/mover';
import { FIXTURE, uniqueDatabaseName } from '@strata/mover/testing';
import { s3Env, startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { createS3Client, downloadStream, listKeys, readSmall } from '@strata/stream';
import { createSources, dropSources, logicalTargetDocs, myAccess, newAgeIdentity, pgAccess } from './logical-targets.ts';
import { waitFor } from './wait.ts';

/**
 * What a target's scope and exact counts make of a backup, for real on both engines: `scope.queries` become CSV
 * objects beside the dump (encrypted and compressed like it), listed in the manifest with role `export`, name,
 * database, SQL and row count, and readable with the plain tools; a failing query fails the backup with the
 * database's message. `excludeData` and `excludeTables` shape the dump and the manifest's scope says so. The
 * inventory holds exact counts under `maxRows`.
 */
const bucket = `strata-ex-${randomBytes(3).toString('hex')}`;
const pgDb = uniqueDatabaseName('exp');
const myDb = uniqueDatabaseName('exm');
const PROBE = 'SELECT id, label, raw FROM export_probe ORDER BY id;';
/**
 * NULL is an empty field, the empty string `""`; quotes doubled; a field with a comma, quote or newline quoted; bytes
 * as `\x` and hex.
 */
const EXPECTED_CSV = 'id,label,raw\r\n1,plain,\\x00ff\r\n2,,\r\n3,"",\r\n4,"a,""b""\nline",\r\n';

let h: CatalogHarness;
let worker: Worker;
let identityFile: string;
let docs: string;

type Row = NonNullable<Awaited<ReturnType<CatalogHarness['runtime']['db']['backup']['findUnique']>>>;
interface ManifestObject { key: string; role: string; name: string; database?: string; sql?: string; rows?: number; sha256: string; size: number; rawSize: number; compression: string }

async function backupNow(target: string): Promise<Row> {
  const res = await h.call('operator', 'post', `/api/v1/targets/default/${target}/backup-now`, { reason: 'test' });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return waitFor(`backup ${res.body.name}`, async () => {
    const row = await h.runtime.db.backup.findFirst({ where: { name: res.body.name } });
    return row && ['Succeeded', 'Failed'].includes(row.phase) ? row : undefined;
  });
}

/** Applies the stack with the targets' scope (and exact counts) as given. */
async function applyTargets(scope: (engine: string) => Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
  const withScope = docs.split('\n---\n').map((doc) => {
    const engine = /kind: BackupTarget[\s\S]*engine: (postgres|mysql)/.exec(doc)?.[1];
    if (!engine) return doc;
    const body = { ...scope(engine), ...(engine === 'postgres' ? { mode: 'logical' } : {}) };
    const more = Object.entries(extra).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}\n`).join('');
    return doc.replace(/ {2}scope: \{ mode: logical \}\n/, '').replace('  policy: nightly', `  scope: ${JSON.stringify(body)}\n${more}  policy: nightly`);
  });
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', withScope.join('\n---\n'), 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
}

async function decrypted(key: string): Promise<string> {
  const client = createS3Client({ endpoint: s3Env().endpoint, region: s3Env().region, accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true });
  const bytes = await readSmall(await downloadStream(client, bucket, key));
  const file = path.join(path.dirname(identityFile), `o-${randomBytes(3).toString('hex')}`);
  writeFileSync(file, bytes);
  return execFileSync('sh', ['-c', `age -d -i '${identityFile}' < '${file}' | zstd -dc`]).toString('utf8');
}

/** What the dump of a backup holds: `pg_restore -l`'s table of contents, or the MariaDB dump's SQL. */
async function dumpText(key: string, engine: string): Promise<string> {
  const client = createS3Client({ endpoint: s3Env().endpoint, region: s3Env().region, accessKeyId: s3Env().accessKey, secretAccessKey: s3Env().secretKey, pathStyle: true });
  const file = path.join(path.dirname(identityFile), `d-${randomBytes(3).toString('hex')}`);
  writeFileSync(file, await readSmall(await downloadStream(client, bucket, key)));
  const read = engine === 'postgres' ? 'pg_restore -l' : 'cat';
  return execFileSync('sh', ['-c', `age -d -i '${identityFile}' < '${file}' | zstd -dc | ${read}`], { maxBuffer: 64 * 1024 * 1024 }).toString('utf8');
}

async function seedProbe(): Promise<void> {
  const rows: Array<[number, string | null, Buffer | null]> = [[1, 'plain', Buffer.from([0, 255])], [2, null, null], [3, '', null], [4, 'a,"b"\nline', null]];
  const client = new pg.Client({ host: pgAccess.host, port: pgAccess.port, user: pgAccess.username, password: pgAccess.password, database: pgDb });
  await client.connect();
  await client.query('CREATE TABLE export_probe (id int PRIMARY KEY, label text, raw bytea)');
  for (const row of rows) await client.query('INSERT INTO export_probe VALUES ($1, $2, $3)', row);
  await client.end();
  const c = await mysql.createConnection({ host: myAccess.host, port: myAccess.port, user: myAccess.username, password: myAccess.password, database: myDb });
  await c.query('CREATE TABLE export_probe (id int PRIMARY KEY, label text, raw varbinary(8))');
  for (const row of rows) await c.query('INSERT INTO export_probe VALUES (?, ?, ?)', row);
  await c.end();
}

beforeAll(async () => {
  const age = newAgeIdentity('ex');
  identityFile = age.file;
  await createSources(pgDb, myDb);
  await seedProbe();
  h = await startCatalogHarness('exports');
  worker = await startWorker({ bus: h.bus, log: silentLogger(), secretsKey: h.secretsKey, concurrency: 2, consumerPrefix: h.cell });
  docs = logicalTargetDocs(bucket, age, pgDb, myDb);
  await applyTargets(() => ({}));
  await h.runtime.mirror(); // creates the bucket
}, 300_000);

afterAll(async () => {
  await worker?.stop();
  await h?.close();
  await dropSources(pgDb, myDb);
});

describe.each([
  { engine: 'postgres', target: 'postgres-main', db: pgDb, missing: /relation "no_such_table" does not exist/ },
  { engine: 'mysql', target: 'mysql-main', db: myDb, missing: /Table '.*no_such_table' doesn't exist/ },
])('$engine', ({ engine, target, db, missing }) => {
  it('stores each query as CSV beside the dump and lists it in the manifest', async () => {
    await applyTargets(() => ({ queries: [{ name: 'probe', sql: PROBE }, { name: 'empty result', database: db, sql: 'SELECT id FROM export_probe WHERE id < 0' }] }));
    const row = await backupNow(target);
    expect(row.phase, row.message).toBe('Succeeded');
    const manifest = row.manifest as unknown as { objects: ManifestObject[]; scope: { queries?: unknown[] } };
    const exports = manifest.objects.filter((o) => o.role === 'export');
    expect(exports).toEqual([
      expect.objectContaining({ name: 'probe', database: db, sql: PROBE, rows: 4, format: 'csv', compression: 'zstd', key: expect.stringMatching(new RegExp(`/${row.id}/exports/probe\\.csv\\.zst\\.age$`)) }),
      expect.objectContaining({ name: 'empty result', database: db, rows: 0, key: expect.stringMatching(/\/exports\/empty%20result\.csv\.zst\.age$/) }),
    ]);
    expect(exports.every((o) => /^[0-9a-f]{64}$/.test(o.sha256) && o.size > 0)).toBe(true);
    expect(manifest.scope.queries).toHaveLength(2);
    expect(await decrypted(exports[0]!.key)).toBe(EXPECTED_CSV);
    expect(exports[0]!.rawSize).toBe(Buffer.byteLength(EXPECTED_CSV));
    expect(await decrypted(exports[1]!.key)).toBe('id\r\n');

    // A download of that backup is a README linking the dump and each export, which decrypt to the same CSV.
    const res = await h.call('restorer', 'post', '/api/v1/restores', { target: `default/${target}`, mode: 'download', backupID: row.id, database: db });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const restore = await waitFor('the download', async () => {
      const view = (await h.call('viewer', 'get', `/api/v1/restores/default/${res.body.name}`)).body.restore;
      return view?.downloadURL ? view : undefined;
    });
    expect(restore.message).toMatch(/2 selective export\(s\)/);
    const readme = await (await fetch(restore.downloadURL)).text();
    expect(readme).toContain('> probe.csv');
    expect(readme).toContain('> empty_result.csv');
    const link = [...readme.matchAll(/'(https?:\/\/[^']+)'/g)].map((m) => m[1]!).find((url) => url.includes('/exports/probe.csv'));
    expect(link, readme).toBeDefined();
    const encrypted = Buffer.from(await (await fetch(link!)).arrayBuffer());
    expect(createHash('sha256').update(encrypted).digest('hex')).toBe(exports[0]!.sha256);
  });

  it('runs each query read-only, and a failing query fails the backup with the database message', async () => {
    await applyTargets(() => ({ queries: [{ name: 'probe', sql: PROBE }, { name: 'broken', sql: 'SELECT * FROM no_such_table' }] }));
    const failed = await backupNow(target);
    expect(failed.phase).toBe('Failed');
    expect(failed.message).toMatch(/^export broken: /);
    expect(failed.message).toMatch(missing);
    const s3 = s3Env();
    const client = createS3Client({ endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey, pathStyle: true });
    const left: string[] = [];
    for await (const key of listKeys(client, bucket, `strata/default/${target}/${failed.id}/`)) left.push(key);
    expect(left).toEqual([]);
    const write = target.startsWith('postgres') ? "SELECT nextval('customers_id_seq')" : 'SELECT id FROM export_probe FOR UPDATE';
    await applyTargets(() => ({ queries: [{ name: 'writes', sql: write }] }));
    const readOnly = await backupNow(target);
    expect(readOnly.phase).toBe('Failed');
    expect(readOnly.message).toMatch(target.startsWith('postgres') ? /export writes: .*cannot execute nextval\(\) in a read-only transaction/ : /export writes: .*Cannot execute statement in a READ ONLY transaction/);
    await applyTargets(() => ({}));
  });

  it('excludeData keeps a table without its rows and excludeTables leaves one out; the manifest says so', async () => {
    const excludeTables = [engine === 'postgres' ? `public.${FIXTURE.excludeTable}` : FIXTURE.excludeTable];
    await applyTargets(() => ({ excludeData: [FIXTURE.excludeDataTable], excludeTables }));
    const row = await backupNow(target);
    expect(row.phase, row.message).toBe('Succeeded');
    const manifest = row.manifest as unknown as { mode: string; objects: ManifestObject[]; scope: Record<string, unknown> };
    expect(manifest.mode).toBe('logical');
    expect(manifest.scope).toMatchObject({ excludeData: [FIXTURE.excludeDataTable], excludeTables });
    const dump = await dumpText(manifest.objects.find((o) => o.role === 'data')!.key, engine);
    if (engine === 'postgres') {
      expect(dump).toMatch(/ TABLE public sessions /);
      expect(dump).not.toMatch(/ TABLE DATA public sessions /);
      expect(dump).toMatch(/ TABLE DATA public customers /);
      expect(dump).not.toMatch(/ scratch /);
    } else {
      expect(dump).toContain('CREATE TABLE `sessions`');
      expect(dump).not.toContain('INSERT INTO `sessions`');
      expect(dump).toContain('INSERT INTO `customers`');
      expect(dump).not.toContain('`scratch`');
    }
    await applyTargets(() => ({}));
  });

  it('exactCounts: the inventory counts the tables under maxRows and says which it left at their estimate', async () => {
    await applyTargets(() => ({}), { exactCounts: { enabled: true, maxRows: 8 } });
    const row = await backupNow(target);
    expect(row.phase, row.message).toBe('Succeeded');
    const res = await h.call('viewer', 'get', `/api/v1/backups/${row.id}/inventory`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const inventory = res.body as { exactCounts?: { tables: number; seconds: number; skipped: string[] }; databases: Array<{ tables: Array<{ name: string; exactRows?: number; rowsEstimate: number }> }> };
    const tables = inventory.databases[0]!.tables;
    expect(tables.find((t) => t.name === 'export_probe')?.exactRows).toBe(4);
    expect(tables.find((t) => t.name === 'customers')?.exactRows).toBeUndefined();
    expect(inventory.exactCounts?.tables).toBe(tables.filter((t) => t.exactRows !== undefined).length);
    expect(inventory.exactCounts?.tables).toBeGreaterThan(0);
    expect(inventory.exactCounts?.seconds).toBeGreaterThanOrEqual(0);
    expect(inventory.exactCounts?.skipped).toContainEqual(expect.stringMatching(new RegExp(`^${db}\\.(public\\.)?customers: estimate \\d+ is not under maxRows 8$`)));
    await applyTargets(() => ({}));
  });
});
