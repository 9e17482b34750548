import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { errorMessage, LOOPBACK, pickPort, sleep, withTimeout } from './net.ts';
import { adoptProcess, claimOwner, ownerAlive, pidAlive, spawnServer, which } from './process.ts';
import { ensureReachable as reachable, readNumber, runAsUser, safeReaddir, serverStateDir, socketDirFor, type RunAs, type ServerIdentity } from './server-user.ts';
import type { ManagedProcess } from './process.ts';

const execFileAsync = promisify(execFile);

const MARIADB: ServerIdentity = {
  product: 'MariaDB',
  account: 'mysql',
  packageName: 'mariadb-server',
  useraddOptions: '--system --no-create-home',
  urlVariable: 'MYSQL_URL',
  slug: 'mariadb',
};

export interface MariadbHandle {
  /** `mysql://root@127.0.0.1:PORT/`: root with an empty password over TCP. */
  adminUrl: string;
  port: number;
  /** The process we started, or undefined when we share one another live process started on our data dir. */
  process: ManagedProcess | undefined;
  stop(): Promise<void>;
}

export interface StartMariadbOptions {
  stateDir: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** How long to wait for the server to answer; default 60 s. */
  readyTimeoutMs?: number;
}

const INSTALL_HINT =
  'Install the MariaDB server (Debian/Ubuntu: `apt-get install mariadb-server`), or set MYSQL_URL to a running MySQL or MariaDB server.';

/** Connection settings of a `mysql://user:password@host:port/database` URL. */
export function mysqlConnectionOptions(url: string): { host: string; port: number; user: string; password: string; database?: string } {
  const parsed = new URL(url);
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') throw new Error(`not a mysql:// URL: ${parsed.protocol}`);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1') || LOOPBACK,
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username) || 'root',
    password: decodeURIComponent(parsed.password),
    ...(database ? { database } : {}),
  };
}

/** Undefined when `SELECT 1` works on url within timeoutMs, otherwise why not. */
export async function probeMysql(url: string, timeoutMs = 2000): Promise<string | undefined> {
  let connection: mysql.Connection | undefined;
  try {
    return await withTimeout(
      (async () => {
        connection = await mysql.createConnection({ ...mysqlConnectionOptions(url), connectTimeout: timeoutMs });
        connection.on('error', () => {});
        await connection.query('SELECT 1');
        return undefined;
      })(),
      timeoutMs * 2,
      `MySQL ${url}`,
    );
  } catch (error) {
    return errorMessage(error);
  } finally {
    const c = connection as mysql.Connection | undefined;
    if (c) await c.end().catch(() => c.destroy());
  }
}

export interface MariadbBinaries {
  mariadbd: string;
  installDb: string;
  version: string;
}

/** mariadbd (or a MariaDB mysqld) and mariadb-install-db, from PATH and the usual sbin directories. */
export async function findMariadbBinaries(env: NodeJS.ProcessEnv): Promise<MariadbBinaries | undefined> {
  const pathValue = [env.PATH ?? process.env.PATH ?? '', '/usr/sbin', '/usr/local/sbin', '/usr/bin', '/usr/local/bin', '/usr/local/mysql/bin', '/usr/libexec'].join(
    path.delimiter,
  );
  const installDb =
    which('mariadb-install-db', pathValue) ?? which('mysql_install_db', [pathValue, '/usr/local/mysql/scripts'].join(path.delimiter));
  if (!installDb) return undefined;
  for (const name of ['mariadbd', 'mysqld']) {
    const server = which(name, pathValue);
    if (!server) continue;
    try {
      const { stdout } = await execFileAsync(server, ['--version'], { timeout: 10_000 });
      if (/mariadb/i.test(stdout)) return { mariadbd: server, installDb, version: stdout.trim() };
    } catch {
      // not runnable
    }
  }
  return undefined;
}

/** A data directory mariadb-install-db finished: it holds the system tables. */
const isDataDir = (dir: string): boolean => fs.existsSync(path.join(dir, 'mysql', 'user.frm')) || fs.existsSync(path.join(dir, 'mysql', 'global_priv.frm'));

function childEnv(user: RunAs | undefined): NodeJS.ProcessEnv {
  return {
    PATH: `/usr/local/sbin${path.delimiter}/usr/local/bin${path.delimiter}/usr/sbin${path.delimiter}/usr/bin${path.delimiter}/sbin${path.delimiter}/bin`,
    LANG: 'C',
    LC_ALL: 'C',
    HOME: user?.home && user.home !== '/nonexistent' ? user.home : os.tmpdir(),
  };
}

/** Small and quick: a development server, not a production one. Shared by the installer and the server. */
const SERVER_TUNING = ['--innodb-buffer-pool-size=64M', '--innodb-log-file-size=16M'];

async function installDb(bin: MariadbBinaries, dataDir: string, user: RunAs | undefined, log: (l: string) => void): Promise<void> {
  const tmp = `${dataDir}.init-${process.pid}-${Date.now()}`;
  // Leftovers of an installer that was killed midway.
  for (const entry of safeReaddir(path.dirname(dataDir))) {
    const match = new RegExp(`^${path.basename(dataDir)}\\.init-(\\d+)-`).exec(entry);
    if (match && !pidAlive(Number(match[1]))) fs.rmSync(path.join(path.dirname(dataDir), entry), { recursive: true, force: true });
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { mode: 0o750 });
  if (user) fs.chownSync(tmp, user.uid, user.gid);
  log(`mariadb: mariadb-install-db ${dataDir}`);
  const logFile = path.join(path.dirname(dataDir), 'logs', 'mariadb-install-db.log');
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  try {
    const { stdout, stderr } = await execFileAsync(
      bin.installDb,
      ['--no-defaults', `--datadir=${tmp}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...SERVER_TUNING],
      {
        env: childEnv(user),
        cwd: os.tmpdir(),
        timeout: 180_000,
        maxBuffer: 16 * 1024 * 1024,
        ...(user ? { uid: user.uid, gid: user.gid } : {}),
      },
    );
    fs.writeFileSync(logFile, stdout + stderr);
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    const e = error as { stderr?: string; stdout?: string };
    throw new Error(`mariadb: mariadb-install-db failed: ${errorMessage(error)}\n${e.stderr ?? ''}${e.stdout ?? ''}`.trim(), { cause: error });
  }
  try {
    fs.renameSync(tmp, dataDir);
  } catch (error) {
    // Someone else (another process sharing the state dir) initialized it first: use theirs.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!isDataDir(dataDir)) throw error;
  }
}

const adminUrlFor = (port: number): string => `mysql://root@${LOOPBACK}:${port}/`;

/**
 * Start (or reuse) our own MariaDB under stateDir: `mariadb-install-db` once, then `mariadbd` on a free
 * loopback port (remembered across runs), with binlog on so positions are testable. As root, both
 * run as the `mysql` user. A server left running on our data dir by a dead run is adopted; one
 * that a live process started is shared and never stopped by us.
 */
export async function startMariadb(options: StartMariadbOptions): Promise<MariadbHandle> {
  const { log } = options;
  const user = runAsUser(MARIADB);
  const stateDir = serverStateDir(MARIADB, options.stateDir, user, log);
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const dataDir = path.join(stateDir, 'mariadb');
  const portFile = path.join(stateDir, 'mariadb.port');
  const ownerFile = path.join(stateDir, 'mariadb.owner');
  const pidFile = path.join(dataDir, 'mariadbd.pid');
  const logFile = path.join(stateDir, 'logs', 'mariadb.log');

  const bin = await findMariadbBinaries(options.env);
  if (!bin) throw new Error(`MariaDB server binaries (mariadbd, mariadb-install-db) not found on PATH or in /usr/sbin. ${INSTALL_HINT}`);
  if (user) reachable(MARIADB, dataDir, user, stateDir);

  if (!isDataDir(dataDir)) {
    if (fs.existsSync(dataDir) && safeReaddir(dataDir).length > 0) {
      throw new Error(`${dataDir} exists but is not a MariaDB data directory; move it away.`);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    await installDb(bin, dataDir, user, log);
  }

  // A server still running on our data dir (left by a killed run, or another process using this state dir).
  const oldPid = readNumber(pidFile);
  const oldPort = readNumber(portFile);
  if (oldPid !== undefined && pidAlive(oldPid, dataDir)) {
    const url = oldPort !== undefined ? adminUrlFor(oldPort) : undefined;
    let problem: string | undefined = 'no port file';
    if (url) {
      const deadline = Date.now() + 15_000;
      problem = await probeMysql(url);
      while (problem !== undefined && Date.now() < deadline && pidAlive(oldPid)) {
        await sleep(250);
        problem = await probeMysql(url);
      }
    }
    if (url && oldPort !== undefined && problem === undefined) {
      if (ownerAlive(ownerFile)) {
        log(`mariadb: sharing the server a live process (see mariadb.owner) started on ${dataDir} (pid ${oldPid}, port ${oldPort}); it will not be stopped`);
        return { adminUrl: url, port: oldPort, process: undefined, stop: async () => {} };
      }
      // Left behind by a run that died without stopping it: adopt it.
      const release = claimOwner(ownerFile);
      const adopted = adoptProcess({ name: 'mariadb', pid: oldPid, logFile, stopSignal: 'SIGTERM', stopTimeoutMs: 30_000 });
      log(`mariadb: adopted the server left running on ${dataDir} (pid ${oldPid}, port ${oldPort})`);
      return {
        adminUrl: url,
        port: oldPort,
        process: adopted,
        stop: async () => {
          await adopted.stop();
          release();
        },
      };
    }
    if (pidAlive(oldPid, dataDir)) {
      throw new Error(`mariadb: pid ${oldPid} holds ${dataDir} but does not answer${oldPort ? ` on port ${oldPort}` : ''}: ${problem}`);
    }
  }

  const socket = socketDirFor(stateDir, user, 'mariadb-run', 'mariadbd.sock', 'sigil-mariadb-');
  const cleanupSocket = (): void => {
    if (socket.temporary) fs.rmSync(socket.dir, { recursive: true, force: true });
  };
  let remembered = readNumber(portFile);
  for (let attempt = 1; ; attempt++) {
    const port = await pickPort(remembered);
    remembered = undefined;
    const child = await spawnServer({
      name: 'mariadb',
      command: bin.mariadbd,
      args: [
        '--no-defaults',
        `--datadir=${dataDir}`,
        `--socket=${path.join(socket.dir, 'mariadbd.sock')}`,
        `--pid-file=${pidFile}`,
        `--port=${port}`,
        `--bind-address=${LOOPBACK}`,
        '--skip-networking=0',
        '--skip-name-resolve',
        // Binlog on, so backups record positions and change streams have something to read.
        '--log-bin=mariadb-bin',
        '--server-id=1',
        '--binlog-format=ROW',
        '--expire-logs-days=2',
        '--character-set-server=utf8mb4',
        '--collation-server=utf8mb4_unicode_ci',
        '--max-allowed-packet=64M',
        '--innodb-flush-log-at-trx-commit=2',
        '--sync-binlog=0',
        '--performance-schema=OFF',
        ...SERVER_TUNING,
      ],
      logFile,
      env: childEnv(user),
      cwd: os.tmpdir(),
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      stopSignal: 'SIGTERM', // clean shutdown
      stopTimeoutMs: 30_000,
    });
    const url = adminUrlFor(port);
    const deadline = Date.now() + readyTimeoutMs;
    let problem: string | undefined = 'not started';
    while (!child.hasExited() && Date.now() < deadline) {
      problem = await probeMysql(url, 1000);
      if (problem === undefined) break;
      await sleep(150);
    }
    if (problem === undefined && !child.hasExited()) {
      fs.writeFileSync(portFile, `${port}\n`);
      const release = claimOwner(ownerFile);
      log(`mariadb: started MariaDB ${bin.version.replace(/^.*Ver\s+/, '').split(/\s+/)[0]} on ${LOOPBACK}:${port} (pid ${child.pid}, data ${dataDir})`);
      return {
        adminUrl: url,
        port,
        process: child,
        stop: async () => {
          await child.stop();
          cleanupSocket();
          release();
        },
      };
    }
    await child.stop();
    const tail = child.logTail();
    if (attempt < 3 && /Address already in use|Can't start server: Bind on TCP\/IP port/i.test(tail)) {
      log(`mariadb: port ${port} was taken, retrying on another port`);
      continue;
    }
    cleanupSocket();
    throw new Error(`mariadb: the server did not become ready (${problem}). Log ${child.logFile}:\n${tail}`);
  }
}
