import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { type EngineServer, LOOPBACK, type RunAs } from './types.ts';

const execFileAsync = promisify(execFile);
const SEARCH = ['/usr/sbin', '/usr/local/sbin', '/usr/bin', '/usr/local/bin'];

function find(names: string[]): string {
  for (const name of names) for (const dir of [...(process.env.PATH ?? '').split(':'), ...SEARCH]) if (dir && fs.existsSync(path.join(dir, name))) return path.join(dir, name);
  throw new Error(`a MariaDB/MySQL sandbox needs ${names[0]} (Debian: apt-get install mariadb-server)`);
}

const TUNING = ['--innodb-buffer-pool-size=64M', '--innodb-log-file-size=16M'];
/** A MariaDB string literal (backslashes and quotes escaped, the server's default sql_mode). */
export const quote = (value: string) => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/** mariadbd with the sandbox's admin created by an init file at every start (idempotent), binary logging off. */
export const mariadbServer: EngineServer = {
  account: 'mysql',
  stopSignal: 'SIGTERM',
  async init(dir, spec, user: RunAs | undefined) {
    const data = path.join(dir, 'data');
    fs.mkdirSync(data, { mode: 0o750 });
    fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
    const init = path.join(dir, 'init.sql');
    fs.writeFileSync(init, `CREATE USER IF NOT EXISTS ${quote(spec.username)}@'%' IDENTIFIED BY ${quote(spec.password)};\nGRANT ALL PRIVILEGES ON *.* TO ${quote(spec.username)}@'%' WITH GRANT OPTION;\n`, { mode: 0o600 });
    if (user) for (const p of [data, path.join(dir, 'run'), init]) fs.chownSync(p, user.uid, user.gid);
    try {
      await execFileAsync(find(['mariadb-install-db', 'mysql_install_db']), ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=socket', '--skip-test-db', ...TUNING], {
        cwd: os.tmpdir(),
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
        maxBuffer: 16 * 1024 * 1024,
        ...(user ?? {}),
      });
    } catch (error) {
      const e = error as { stderr?: string };
      throw new Error(`mariadb-install-db failed: ${e.stderr?.trim() || (error as Error).message}`, { cause: error });
    }
  },
  command(dir, _spec, port) {
    return {
      command: find(['mariadbd', 'mysqld']),
      args: [
        '--no-defaults', `--datadir=${path.join(dir, 'data')}`, `--port=${port}`, `--bind-address=${LOOPBACK}`, `--socket=${path.join(dir, 'run', 'mariadbd.sock')}`,
        `--pid-file=${path.join(dir, 'run', 'mariadbd.pid')}`, '--skip-name-resolve', '--skip-log-bin', `--init-file=${path.join(dir, 'init.sql')}`,
        '--innodb-flush-log-at-trx-commit=0', '--max-allowed-packet=256M', ...TUNING,
      ],
    };
  },
  async probe(spec, port) {
    const connection = await mysql.createConnection({ host: LOOPBACK, port, user: spec.username, password: spec.password, connectTimeout: 2000 });
    try {
      await connection.query('SELECT 1');
    } finally {
      await connection.end().catch(() => {});
    }
  },
};
