import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureInfra } from '../src/index.ts';
import type { Infra } from '../src/index.ts';
import { mysqlConnectionOptions, probeMysql, startMariadb } from '../src/mariadb.ts';
import type { MariadbHandle } from '../src/mariadb.ts';
import { canConnect } from '../src/net.ts';
import { alive, readPid, removeDir, tempStateDir } from './helpers.ts';

// Provided by the test run's global setup; named so that ensureInfra only has MariaDB (and the
// in-process S3 and SMTP) to start itself.
const POSTGRES_URL = process.env.POSTGRES_URL as string;
const NATS_URL = process.env.NATS_URL as string;

async function query<T>(url: string, sql: string): Promise<T[]> {
  const connection = await mysql.createConnection({ ...mysqlConnectionOptions(url), connectTimeout: 5000 });
  try {
    const [rows] = await connection.query(sql);
    return rows as T[];
  } finally {
    await connection.end();
  }
}

/** The uid a process runs as, from /proc. */
function uidOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
}

/** A pid that belonged to a process which has exited. */
async function deadPid(): Promise<number> {
  const child = spawn('true');
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

describe('MariaDB in the local infrastructure', () => {
  const stateDir = tempStateDir();
  const started: Array<Infra | MariadbHandle> = [];
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
    removeDir(stateDir);
  });

  it('ensureInfra without MYSQL_URL starts its own MariaDB, with binlog on, and stop() stops it', { timeout: 90_000 }, async () => {
    expect(POSTGRES_URL && NATS_URL, 'the global test setup provides POSTGRES_URL and NATS_URL').toBeTruthy();
    const lines: string[] = [];
    const infra = await ensureInfra({ stateDir, env: { POSTGRES_URL, NATS_URL }, log: (l) => lines.push(l) });
    started.push(infra);
    expect(infra.mysql.source).toBe('started');
    expect(infra.mysql.adminUrl).toMatch(/^mysql:\/\/root@127\.0\.0\.1:\d+\/$/);
    expect(infra.mysql.adminUrl).not.toContain(':3306/');
    expect(lines.some((l) => l.startsWith('mariadb: mariadb-install-db'))).toBe(true);

    const [info] = await query<{ version: string; logBin: number; user: string }>(
      infra.mysql.adminUrl,
      'SELECT VERSION() AS version, @@log_bin AS logBin, CURRENT_USER() AS user',
    );
    expect(info?.version).toMatch(/MariaDB/);
    expect(Number(info?.logBin)).toBe(1);
    expect(info?.user).toMatch(/^root@/);
    await query(infra.mysql.adminUrl, 'CREATE DATABASE kept_across_runs');
    const status = await query<{ File: string; Position: number }>(infra.mysql.adminUrl, 'SHOW MASTER STATUS');
    expect(status[0]?.File).toMatch(/^mariadb-bin\.\d+$/);

    const pid = readPid(path.join(stateDir, 'mariadb', 'mariadbd.pid'));
    if (process.getuid?.() === 0) expect(uidOf(pid)).not.toBe(0); // as root, it runs as `mysql`

    // Pointed at ours, a second ensureInfra reports it as env-provided and its stop() leaves it alone.
    const viaEnv = await ensureInfra({ stateDir: path.join(stateDir, 'second'), env: { POSTGRES_URL, NATS_URL, MYSQL_URL: infra.mysql.adminUrl } });
    expect(viaEnv.mysql).toEqual({ adminUrl: infra.mysql.adminUrl, source: 'env' });
    await viaEnv.stop();
    expect(await probeMysql(infra.mysql.adminUrl)).toBeUndefined();

    const port = Number(new URL(infra.mysql.adminUrl).port);
    await infra.stop();
    expect(alive(pid)).toBe(false);
    expect(await canConnect('127.0.0.1', port, 500)).toBe(false);
  });

  it('reuses its data and port on the next run', { timeout: 60_000 }, async () => {
    const first = started[0] as Infra;
    const lines: string[] = [];
    const infra = await ensureInfra({ stateDir, env: { POSTGRES_URL, NATS_URL }, log: (l) => lines.push(l) });
    started.push(infra);
    expect(lines.some((l) => l.startsWith('mariadb: mariadb-install-db'))).toBe(false);
    expect(infra.mysql.adminUrl).toBe(first.mysql.adminUrl);
    expect(await query(infra.mysql.adminUrl, `SHOW DATABASES LIKE 'kept_across_runs'`)).toHaveLength(1);
    await infra.stop();
  });

  it('adopts a server left running by a run that died, and stops it', { timeout: 60_000 }, async () => {
    const lines: string[] = [];
    const log = (l: string): void => {
      lines.push(l);
    };
    const first = await startMariadb({ stateDir, env: {}, log });
    started.push(first);
    const pid = readPid(path.join(stateDir, 'mariadb', 'mariadbd.pid'));
    // The run that started it is gone (its owner file names a dead process).
    fs.writeFileSync(path.join(stateDir, 'mariadb.owner'), `${await deadPid()}\n`);
    const second = await startMariadb({ stateDir, env: {}, log });
    started.push(second);
    expect(second.adminUrl).toBe(first.adminUrl);
    expect(lines.some((l) => l.startsWith('mariadb: adopted the server left running'))).toBe(true);
    expect(await probeMysql(second.adminUrl)).toBeUndefined();
    await second.stop();
    expect(alive(pid)).toBe(false);
  });

  it('starts its own when MYSQL_URL does not answer', { timeout: 60_000 }, async () => {
    const lines: string[] = [];
    const infra = await ensureInfra({
      stateDir,
      env: { POSTGRES_URL, NATS_URL, MYSQL_URL: 'mysql://root@127.0.0.1:1/' },
      log: (l) => lines.push(l),
    });
    started.push(infra);
    expect(infra.mysql.source).toBe('started');
    expect(lines.some((l) => l.startsWith('mysql: MYSQL_URL mysql://root@127.0.0.1:1/ does not answer'))).toBe(true);
    expect(await probeMysql(infra.mysql.adminUrl)).toBeUndefined();
    await infra.stop();
  });
});
