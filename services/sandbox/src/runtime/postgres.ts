import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { type EngineServer, LOOPBACK, type RunAs } from './types.ts';

const execFileAsync = promisify(execFile);

function binaries(major: number): { initdb: string; postgres: string } {
  const installed = fs.existsSync('/usr/lib/postgresql') ? fs.readdirSync('/usr/lib/postgresql').map(Number).filter(Boolean).sort((a, b) => b - a) : [];
  const dirs = [`/usr/lib/postgresql/${major}/bin`, `/usr/pgsql-${major}/bin`];
  const dir = dirs.find((d) => fs.existsSync(path.join(d, 'postgres')));
  if (!dir) {
    throw new Error(`a sandbox of a PostgreSQL ${major} backup needs the PostgreSQL ${major} server binaries (Debian: apt-get install postgresql-${major})${installed.length ? `; installed: ${installed.join(', ')}` : ''}`);
  }
  return { initdb: path.join(dir, 'initdb'), postgres: path.join(dir, 'postgres') };
}

/**
 * PostgreSQL of the backup's major. A sandbox is disposable: `fsync` is off so a restore runs at memory speed; a
 * machine that crashes loses the sandbox, which then fails with the server's own message when started again.
 */
export const postgresServer: EngineServer = {
  account: 'postgres',
  stopSignal: 'SIGINT',
  async init(dir, spec, user: RunAs | undefined) {
    const pwfile = path.join(dir, 'pwfile');
    fs.writeFileSync(pwfile, `${spec.password}\n`, { mode: 0o600 });
    if (user) fs.chownSync(pwfile, user.uid, user.gid);
    try {
      await execFileAsync(binaries(spec.major).initdb, ['-D', path.join(dir, 'data'), '-U', spec.username, `--pwfile=${pwfile}`, '--auth-host=scram-sha-256', '--auth-local=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync'], {
        cwd: os.tmpdir(),
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
        ...(user ?? {}),
      });
    } catch (error) {
      const e = error as { stderr?: string };
      throw new Error(`initdb failed: ${e.stderr?.trim() || (error as Error).message}`, { cause: error });
    } finally {
      fs.rmSync(pwfile, { force: true });
    }
    fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
    if (user) fs.chownSync(path.join(dir, 'run'), user.uid, user.gid);
  },
  command(dir, spec, port) {
    return {
      command: binaries(spec.major).postgres,
      args: ['-D', path.join(dir, 'data'), '-p', String(port), '-k', path.join(dir, 'run'), '-c', `listen_addresses=${LOOPBACK}`, '-c', 'max_connections=40', '-c', 'shared_buffers=32MB', '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'synchronous_commit=off', '-c', 'logging_collector=off'],
    };
  },
  async probe(spec, port) {
    const client = new pg.Client({ host: LOOPBACK, port, user: spec.username, password: spec.password, database: 'postgres', connectionTimeoutMillis: 2000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
    } finally {
      await client.end().catch(() => {});
    }
  },
};
