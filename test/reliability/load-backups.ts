import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import pg from 'pg';
import { runCli } from '@strata/cli';
import type { LoadClient } from './load-client.ts';
import { createDatabase } from '../e2e/console-pages.ts';

/**
 * Strata's side of the load: the quickstart's store, policy (with change capture) and Postgres target, backing up a
 * database of the stack's own Postgres that a writer keeps committing to, backups requested now and then, and the
 * target's WAL streamed meanwhile.
 */
export const TARGET = 'default/postgres';

export interface BackupLoad {
  token: Record<string, string>;
  database: string;
  /** Backups requested (the names backup-now answered). */
  requested: string[];
}

/** What the catalog says of one backup run. */
export interface BackupRun {
  id: string;
  phase: string;
  error?: string;
}

/** A dev-issuer token of the given role, as the access proxy's header. */
export async function strataToken(client: LoadClient, role: string): Promise<Record<string, string>> {
  const minted = await client.send('POST', '/api/dev/token', { body: { email: `faults-${role}@example.test`, role } });
  return { 'cf-access-jwt-assertion': minted.body.token as string };
}

/** `strata quickstart` writes the resources; all but the MariaDB target are applied (this load backs up Postgres only). */
export async function applyQuickstart(client: LoadClient, stateDir: string, database: string): Promise<BackupLoad> {
  const dir = await mkdtemp(path.join(tmpdir(), 'faults-strata-'));
  const file = path.join(dir, 'stack.yaml');
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (chunk) => (err += chunk));
  stdout.resume();
  const code = await runCli(['quickstart', '--stack', stateDir, '--file', file, '--bucket', 'faults-backups', '--postgres-databases', database], { stdout, stderr, env: { HOME: dir, STRATA_CONFIG: path.join(dir, 'config.json'), PWD: dir } });
  if (code !== 0) throw new Error(`strata quickstart failed: ${err}`);
  const documents = (await readFile(file, 'utf8')).split(/^---$/m).filter((doc) => !(/kind:\s*BackupTarget/.test(doc) && /engine:\s*mysql/.test(doc)));
  const token = await strataToken(client, 'restorer-admin');
  const yaml = documents.join('---');
  const applied = await fetch(`${client.base}/api/v1/resources`, { method: 'POST', headers: { ...token, 'content-type': 'application/yaml' }, body: yaml });
  if (!applied.ok) throw new Error(`applying the quickstart answered ${applied.status}: ${await applied.text()}`);
  return { token, database, requested: [] };
}

/** A full backup now; a 409 (one is running) is not an error of the platform and requests none. */
export async function backupNow(client: LoadClient, load: BackupLoad, reason: string): Promise<void> {
  const answer = await client.send('POST', `/api/v1/targets/${TARGET}/backup-now`, { headers: load.token, body: { reason }, accept: (s) => s === 202 || s === 409 });
  if (answer.status === 202) load.requested.push(String(answer.body.name ?? answer.body.message));
}

export async function backupsOf(client: LoadClient, load: BackupLoad): Promise<BackupRun[]> {
  return (await client.send('GET', `/api/v1/targets/${TARGET}/backups`, { headers: load.token })).body.backups ?? [];
}

/**
 * The source database's writer: one row per transaction every `everyMs`, on a connection opened again after it breaks
 * (Postgres restarting). Answers the rows whose COMMIT returned.
 */
export class SourceWriter {
  committed = 0;
  failedCommits = 0;
  private running = true;
  private loop: Promise<void> | undefined;
  private readonly url: string;

  private constructor(url: string) {
    this.url = url;
  }

  static async create(adminUrl: string, database: string): Promise<SourceWriter> {
    const url = await createDatabase(adminUrl, database);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('CREATE TABLE orders (id bigserial PRIMARY KEY, note text NOT NULL, at timestamptz NOT NULL DEFAULT now())');
    await client.end();
    return new SourceWriter(url);
  }

  start(everyMs: number): void {
    this.loop = (async () => {
      let client: pg.Client | undefined;
      while (this.running) {
        try {
          if (!client) {
            client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 2000 });
            client.on('error', () => undefined);
            await client.connect();
          }
          await client.query('INSERT INTO orders (note) VALUES ($1)', [`order ${this.committed + 1}`]);
          this.committed += 1;
        } catch {
          this.failedCommits += 1;
          await client?.end().catch(() => undefined);
          client = undefined;
        }
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
      await client?.end().catch(() => undefined);
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** Rows in the table now (after stop: every committed row is there, and no other). */
  async count(): Promise<number> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM orders')).rows[0]!.n);
    } finally {
      await client.end();
    }
  }

  /** Forces a new WAL segment, so the streamer must write a new file into its work folder. */
  async switchWal(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      await client.query('SELECT pg_switch_wal()');
    } finally {
      await client.end();
    }
  }
}
