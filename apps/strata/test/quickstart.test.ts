// `strata quickstart`: resources for the local stack from its stack.json, written (and applied) without editing.
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { validateResource } from '@sigil/proto/resources';
import { ageIdentityToRecipient } from '@strata/stream/age';
import { runCli } from '../src/cli.ts';

const facts = {
  gatewayUrl: 'http://127.0.0.1:8080',
  s3: { endpoint: 'http://127.0.0.1:39001', region: 'us-east-1', accessKey: 'S3RVER', secretKey: 'S3RVER', embedded: true },
  postgres: { url: 'postgres://postgres@127.0.0.1:5432/postgres' },
  mysql: { url: 'mysql://root:s%40cret@127.0.0.1:3307/' },
};

let dir: string;
let stackDir: string;

async function strata(args: string[], fetchImpl?: typeof fetch) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const env = { HOME: dir, STRATA_CONFIG: path.join(dir, 'config.json'), PWD: dir };
  const code = await runCli(args, { stdout, stderr, env, fetch: fetchImpl });
  return { code, out, err };
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'strata-quickstart-'));
  stackDir = path.join(dir, '.local', 'stack');
  await import('node:fs/promises').then((fs) => fs.mkdir(stackDir, { recursive: true }));
  await writeFile(path.join(stackDir, 'stack.json'), JSON.stringify(facts));
});

const documentsOf = async (file: string) => YAML.parseAllDocuments(await readFile(file, 'utf8')).map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec?: Record<string, unknown>; stringData?: Record<string, string> });

describe('strata quickstart', () => {
  it('writes a stack.yaml that validates as written: secrets, a store with a fresh age key, a policy, two targets', async () => {
    const run = await strata(['quickstart', '--postgres-databases', 'app', '--mysql-databases', 'shop,crm']);
    expect(run.code, run.err).toBe(0);
    const file = path.join(dir, 'stack.yaml');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(run.out).toMatch(/next: strata apply -f stack.yaml/);

    const docs = await documentsOf(file);
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'Secret/quickstart-s3', 'Secret/quickstart-age', 'Secret/postgres-credentials', 'Secret/mariadb-credentials',
      'BackupStore/local', 'BackupPolicy/nightly', 'BackupTarget/postgres', 'BackupTarget/mariadb',
    ]);
    for (const doc of docs.filter((d) => d.kind !== 'Secret')) {
      const result = validateResource(doc);
      expect(result.ok, JSON.stringify(result)).toBe(true);
    }
    const byName = Object.fromEntries(docs.map((d) => [`${d.kind}/${d.metadata.name}`, d]));
    const identity = byName['Secret/quickstart-age']!.stringData!.identity!;
    const store = byName['BackupStore/local']!.spec as { s3: Record<string, unknown>; encryption: { ageRecipients: string[] } };
    expect(store.encryption.ageRecipients).toEqual([ageIdentityToRecipient(identity)]);
    expect(store.s3).toMatchObject({ endpoint: facts.s3.endpoint, bucket: 'strata-backups', pathStyle: true, disableConditionalPut: true });
    expect(byName['Secret/quickstart-s3']!.stringData).toEqual({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });
    expect(byName['BackupTarget/mariadb']!.spec).toMatchObject({ engine: 'mysql', endpoint: { host: '127.0.0.1', port: 3307 }, databases: ['shop', 'crm'] });
    expect(byName['Secret/mariadb-credentials']!.stringData).toEqual({ username: 'root', password: 's@cret' });
    expect(byName['BackupTarget/postgres']!.spec).toMatchObject({ engine: 'postgres', endpoint: { port: 5432 }, databases: ['app'] });
    // Several backups of one day all stay (a backup, a migration, a backup: two to diff), besides one a day and a week.
    expect(byName['BackupPolicy/nightly']!.spec).toMatchObject({ retain: { newest: 5, daily: 7, weekly: 4 } });
    // The stack's Postgres runs with wal_level=logical: previews decode its change log. The schema refuses it for mysql.
    expect(byName['BackupTarget/postgres']!.spec).toMatchObject({ previews: { logical: true } });
    expect(byName['BackupTarget/mariadb']!.spec).not.toHaveProperty('previews');
  });

  it("targets the stack's demo database where the stack keeps one, every database elsewhere, and masks email columns", async () => {
    await writeFile(path.join(stackDir, 'stack.json'), JSON.stringify({ ...facts, mysql: { ...facts.mysql, demoDatabase: 'shop' } }));
    const run = await strata(['quickstart']);
    expect(run.code, run.err).toBe(0);
    const targets = Object.fromEntries((await documentsOf(path.join(dir, 'stack.yaml'))).filter((d) => d.kind === 'BackupTarget').map((d) => [d.metadata.name, d.spec]));
    expect(targets.mariadb).toMatchObject({ databases: ['shop'], mask: ['^email$'] });
    expect(targets.postgres).toMatchObject({ mask: ['^email$'] });
    expect(targets.postgres).not.toHaveProperty('databases');
    // Databases asked for win over the demo.
    const asked = await strata(['quickstart', '--force', '--mysql-databases', 'crm']);
    expect(asked.code, asked.err).toBe(0);
    const mariadb = (await documentsOf(path.join(dir, 'stack.yaml'))).find((d) => d.metadata.name === 'mariadb');
    expect(mariadb?.spec).toMatchObject({ databases: ['crm'] });
  });

  it('keeps an existing file unless --force, and gives a new key each time', async () => {
    expect((await strata(['quickstart'])).code).toBe(0);
    const first = await readFile(path.join(dir, 'stack.yaml'), 'utf8');
    const again = await strata(['quickstart']);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/stack.yaml exists: pass --force/);
    expect((await strata(['quickstart', '--force'])).code).toBe(0);
    expect(await readFile(path.join(dir, 'stack.yaml'), 'utf8')).not.toEqual(first);
  });

  it('says how to start the stack when none is found', async () => {
    const run = await strata(['quickstart', '--stack', path.join(dir, 'nowhere')]);
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/is the local stack running\? `bash scripts\/up.sh`/);
  });

  it('--apply sends the file to the console API and prints what was applied', async () => {
    const sent: Array<{ url: string; type: string | null; body: string }> = [];
    const fakeFetch = (async (input: Request) => {
      if (input.method === 'GET') return Response.json({ error: 'BackupStore default/local was not found.' }, { status: 404 });
      sent.push({ url: input.url, type: input.headers.get('content-type'), body: await input.text() });
      return Response.json({ applied: [{ kind: 'BackupTarget', namespace: 'default', name: 'postgres', action: 'created' }] });
    }) as unknown as typeof fetch;
    const run = await strata(['--server', 'http://127.0.0.1:8080', 'quickstart', '--apply'], fakeFetch);
    expect(run.code, run.err).toBe(0);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ url: 'http://127.0.0.1:8080/api/v1/resources', type: 'application/yaml' });
    expect(sent[0]!.body).toEqual(await readFile(path.join(dir, 'stack.yaml'), 'utf8'));
    expect(run.out).toMatch(/backuptarget\/default\/postgres created/);
    expect(run.out).toMatch(/next: strata backup-now default\/postgres --watch/);
  });

  it('--apply changes nothing where the quickstart was applied before: a new key would strand the backups made with the old one', async () => {
    const asked: string[] = [];
    const fakeFetch = (async (input: Request) => {
      asked.push(`${input.method} ${new URL(input.url).pathname}`);
      return Response.json({ kind: 'BackupStore', metadata: { namespace: 'default', name: 'local' } });
    }) as unknown as typeof fetch;
    const run = await strata(['--server', 'http://127.0.0.1:8080', 'quickstart', '--apply'], fakeFetch);
    expect(run.code, run.err).toBe(0);
    expect(asked).toEqual(['GET /api/v1/resources/BackupStore/default/local']);
    expect(run.out).toMatch(/already applied: BackupStore default\/local exists/);
    await expect(stat(path.join(dir, 'stack.yaml'))).rejects.toThrow(/ENOENT/);
  });
});
