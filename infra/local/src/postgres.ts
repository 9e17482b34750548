import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { errorMessage, LOOPBACK, pickPort, sleep } from './net.ts';
import { adoptProcess, claimOwner, lookupUser, ownerAlive, pidAlive, spawnServer, which } from './process.ts';
import type { ManagedProcess } from './process.ts';

const execFileAsync = promisify(execFile);

export interface PostgresHandle {
  adminUrl: string;
  port: number;
  /** The process we started, or undefined when we reuse one already running on our data dir. */
  process: ManagedProcess | undefined;
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  stateDir: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** How long to wait for the server to answer; default 60 s. */
  readyTimeoutMs?: number;
}

const INSTALL_HINT =
  'Install the PostgreSQL server (Debian/Ubuntu: `apt-get install postgresql`), ' +
  'or set POSTGRES_URL to a running server.';

/** Undefined when `SELECT 1` works on url within timeoutMs, otherwise why not. */
export async function probePostgres(url: string, timeoutMs = 2000): Promise<string | undefined> {
  let client: pg.Client | undefined;
  try {
    client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
    client.on('error', () => {});
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return errorMessage(error);
  } finally {
    await client?.end().catch(() => {});
  }
}

interface PgBinaries {
  dir: string;
  initdb: string;
  postgres: string;
  major: number;
}

async function majorOf(postgresBin: string): Promise<number | undefined> {
  try {
    const { stdout } = await execFileAsync(postgresBin, ['--version'], { timeout: 10_000 });
    const match = /(\d+)(?:\.\d+)?/.exec(stdout);
    return match?.[1] ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Directories holding both initdb and postgres: PATH first, then /usr/lib/postgresql/<newest>/bin. */
export async function findPostgresBinaries(env: NodeJS.ProcessEnv): Promise<PgBinaries[]> {
  const dirs: string[] = [];
  const add = (dir: string): void => {
    let real: string;
    try {
      real = fs.realpathSync(dir);
    } catch {
      return;
    }
    if (!dirs.includes(real)) dirs.push(real);
  };
  const pathValue = env.PATH ?? process.env.PATH;
  for (const name of ['initdb', 'postgres']) {
    const found = which(name, pathValue);
    if (found) {
      add(path.dirname(found));
      try {
        add(path.dirname(fs.realpathSync(found)));
      } catch {
        // dangling link
      }
    }
  }
  for (const root of ['/usr/lib/postgresql', '/usr/local/pgsql', '/usr/pgsql']) {
    let entries: string[];
    try {
      entries = fs.readdirSync(root);
    } catch {
      continue;
    }
    entries.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a) || b.localeCompare(a));
    for (const entry of entries) add(path.join(root, entry, 'bin'));
  }
  for (const entry of safeReaddir('/usr').filter((e) => e.startsWith('pgsql-')).sort().reverse()) {
    add(path.join('/usr', entry, 'bin'));
  }
  const result: PgBinaries[] = [];
  for (const dir of dirs) {
    const initdb = path.join(dir, 'initdb');
    const postgres = path.join(dir, 'postgres');
    if (!which('initdb', dir) || !which('postgres', dir)) continue;
    const major = await majorOf(postgres);
    if (major !== undefined) result.push({ dir, initdb, postgres, major });
  }
  return result;
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

interface RunAs {
  uid: number;
  gid: number;
  name: string;
  home: string;
}

/** Postgres refuses to run as root: when we are root, run it as the `postgres` system user. */
function runAsUser(): RunAs | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const user = lookupUser('postgres');
  if (!user || user.uid === 0) {
    throw new Error(
      'PostgreSQL refuses to run as root and there is no unprivileged `postgres` user to run it as. ' +
        'Install the server package, which creates it (`apt-get install postgresql`), or create one ' +
        '(`useradd --system --home /var/lib/postgresql postgres`), or set POSTGRES_URL.',
    );
  }
  return { ...user, name: 'postgres' };
}

/** The unprivileged user must be able to reach the data and socket directories. */
function ensureReachable(target: string, user: RunAs, stateDir: string): void {
  const stateStat = fs.statSync(stateDir);
  if ((stateStat.mode & 0o001) === 0 && stateStat.uid !== user.uid) {
    fs.chmodSync(stateDir, (stateStat.mode & 0o7777) | 0o001); // traverse only, no listing
  }
  let dir = path.dirname(path.resolve(target));
  for (;;) {
    const st = fs.statSync(dir);
    const ok =
      (st.uid === user.uid && (st.mode & 0o100) !== 0) ||
      (st.gid === user.gid && (st.mode & 0o010) !== 0) ||
      (st.mode & 0o001) !== 0;
    if (!ok) {
      throw new Error(
        `PostgreSQL runs as the unprivileged user "${user.name}", which cannot enter ${dir} ` +
          `(mode ${(st.mode & 0o777).toString(8)}). Choose a state directory it can reach, or run \`chmod o+x ${dir}\`.`,
      );
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
}

function readPort(file: string): number | undefined {
  try {
    const port = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
  } catch {
    return undefined;
  }
}

function readPgVersion(dataDir: string): number | undefined {
  try {
    return Number(fs.readFileSync(path.join(dataDir, 'PG_VERSION'), 'utf8').trim());
  } catch {
    return undefined;
  }
}

function childEnv(bin: PgBinaries, user: RunAs | undefined): NodeJS.ProcessEnv {
  return {
    PATH: `${bin.dir}${path.delimiter}/usr/local/bin${path.delimiter}/usr/bin${path.delimiter}/bin`,
    LANG: 'C',
    LC_ALL: 'C',
    HOME: user?.home ?? os.homedir(),
  };
}

async function initdb(bin: PgBinaries, dataDir: string, user: RunAs | undefined, log: (l: string) => void): Promise<void> {
  const tmp = `${dataDir}.init-${process.pid}-${Date.now()}`;
  // Leftovers of an initdb that was killed midway.
  for (const entry of safeReaddir(path.dirname(dataDir))) {
    const match = new RegExp(`^${path.basename(dataDir)}\\.init-(\\d+)-`).exec(entry);
    if (match && !pidAlive(Number(match[1]))) fs.rmSync(path.join(path.dirname(dataDir), entry), { recursive: true, force: true });
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { mode: 0o700 });
  if (user) fs.chownSync(tmp, user.uid, user.gid);
  log(`postgres: initdb ${dataDir} (PostgreSQL ${bin.major})`);
  const logFile = path.join(path.dirname(dataDir), 'logs', 'initdb.log');
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  try {
    const { stdout, stderr } = await execFileAsync(
      bin.initdb,
      ['-D', tmp, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C'],
      {
        env: childEnv(bin, user),
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
    throw new Error(`postgres: initdb failed: ${errorMessage(error)}\n${e.stderr ?? ''}${e.stdout ?? ''}`.trim(), { cause: error });
  }
  try {
    fs.renameSync(tmp, dataDir);
  } catch (error) {
    // Someone else (another process sharing the state dir) initialized it first: use theirs.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (readPgVersion(dataDir) === undefined) throw error;
  }
}

/** A postmaster still running on our data dir (e.g. left by a killed run, or another process using this state dir). */
function runningPostmaster(dataDir: string): { pid: number; port: number } | undefined {
  try {
    const lines = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    if (pidAlive(pid, dataDir) && port > 0) return { pid, port };
  } catch {
    // no lock file
  }
  return undefined;
}

function socketDirFor(stateDir: string, user: RunAs | undefined): { dir: string; temporary: boolean } {
  // Unix socket paths are limited to 107 bytes.
  let dir = path.join(stateDir, 'run');
  let temporary = false;
  if (Buffer.byteLength(path.join(dir, '.s.PGSQL.65535.lock')) > 100) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigil-pg-'));
    temporary = true;
  } else {
    fs.mkdirSync(dir, { recursive: true });
  }
  if (user) {
    fs.chownSync(dir, user.uid, user.gid);
    fs.chmodSync(dir, 0o700);
  }
  return { dir, temporary };
}

/**
 * Where our Postgres keeps its files. As root the server runs as `postgres`, which must be able to
 * reach them; when the state directory sits under a private folder (a clone in a mode-700 home or
 * temp dir), the server's files go to a per-state-dir folder under the system temp dir instead.
 */
function postgresStateDir(stateDir: string, user: RunAs | undefined, log: (line: string) => void): string {
  if (!user) return stateDir;
  try {
    ensureReachable(path.join(stateDir, 'postgres'), user, stateDir);
    return stateDir;
  } catch (error) {
    const fallback = path.join(os.tmpdir(), `sigil-postgres-${createHash('sha256').update(path.resolve(stateDir)).digest('hex').slice(0, 12)}`);
    fs.mkdirSync(path.join(fallback, 'logs'), { recursive: true, mode: 0o711 });
    fs.chmodSync(fallback, 0o711);
    log(`postgres: ${(error as Error).message.split('.')[0]}; keeping its files in ${fallback}`);
    return fallback;
  }
}

export async function startPostgres(options: StartPostgresOptions): Promise<PostgresHandle> {
  const { log } = options;
  const stateDir = postgresStateDir(options.stateDir, runAsUser(), log);
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const dataDir = path.join(stateDir, 'postgres');
  const portFile = path.join(stateDir, 'postgres.port');
  const ownerFile = path.join(stateDir, 'postgres.owner');

  const candidates = await findPostgresBinaries(options.env);
  if (candidates.length === 0) {
    throw new Error(`PostgreSQL server binaries (initdb, postgres) not found on PATH or in /usr/lib/postgresql/*/bin. ${INSTALL_HINT}`);
  }
  const existingMajor = readPgVersion(dataDir);
  const bin = existingMajor === undefined ? candidates[0] : candidates.find((c) => c.major === existingMajor);
  if (!bin) {
    throw new Error(
      `${dataDir} holds a PostgreSQL ${existingMajor} cluster but only PostgreSQL ` +
        `${candidates.map((c) => c.major).join(', ')} is installed. Install postgresql-${existingMajor} ` +
        `(\`apt-get install postgresql-${existingMajor}\`) or delete ${dataDir} to start afresh.`,
    );
  }
  const user = runAsUser();
  if (user) ensureReachable(dataDir, user, stateDir);

  if (existingMajor === undefined) {
    if (fs.existsSync(dataDir) && safeReaddir(dataDir).length > 0) {
      throw new Error(`${dataDir} exists but is not a PostgreSQL data directory; move it away.`);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    await initdb(bin, dataDir, user, log);
  }

  const running = runningPostmaster(dataDir);
  if (running) {
    const url = adminUrlFor(running.port);
    const deadline = Date.now() + 15_000;
    let problem = await probePostgres(url);
    while (problem !== undefined && Date.now() < deadline && pidAlive(running.pid)) {
      await sleep(250);
      problem = await probePostgres(url);
    }
    if (problem === undefined) {
      if (ownerAlive(ownerFile)) {
        log(`postgres: sharing the server a live process (see postgres.owner) started on ${dataDir} (pid ${running.pid}, port ${running.port}); it will not be stopped`);
        return { adminUrl: url, port: running.port, process: undefined, stop: async () => {} };
      }
      // Left behind by a run that died without stopping it: take it over.
      const release = claimOwner(ownerFile);
      const adopted = adoptProcess({
        name: 'postgres',
        pid: running.pid,
        logFile: path.join(stateDir, 'logs', 'postgres.log'),
        stopSignal: 'SIGINT',
        stopTimeoutMs: 20_000,
      });
      log(`postgres: took over the server left running on ${dataDir} (pid ${running.pid}, port ${running.port})`);
      return {
        adminUrl: url,
        port: running.port,
        process: adopted,
        stop: async () => {
          await adopted.stop();
          release();
        },
      };
    }
    if (pidAlive(running.pid, dataDir)) {
      throw new Error(`postgres: pid ${running.pid} holds ${dataDir} but does not answer on port ${running.port}: ${problem}`);
    }
  }

  const socket = socketDirFor(stateDir, user);
  const cleanupSocket = (): void => {
    if (socket.temporary) fs.rmSync(socket.dir, { recursive: true, force: true });
  };
  let remembered = readPort(portFile);
  for (let attempt = 1; ; attempt++) {
    const port = await pickPort(remembered);
    remembered = undefined;
    const child = await spawnServer({
      name: 'postgres',
      command: bin.postgres,
      args: ['-D', dataDir, '-p', String(port), '-k', socket.dir, '-c', `listen_addresses=${LOOPBACK}`, '-c', 'max_connections=200'],
      logFile: path.join(stateDir, 'logs', 'postgres.log'),
      env: childEnv(bin, user),
      cwd: os.tmpdir(),
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      stopSignal: 'SIGINT', // "fast" shutdown: disconnect clients, checkpoint, exit
      stopTimeoutMs: 20_000,
    });
    const url = adminUrlFor(port);
    const deadline = Date.now() + readyTimeoutMs;
    let problem: string | undefined = 'not started';
    while (!child.hasExited() && Date.now() < deadline) {
      problem = await probePostgres(url, 1000);
      if (problem === undefined) break;
      await sleep(150);
    }
    if (problem === undefined && !child.hasExited()) {
      fs.writeFileSync(portFile, `${port}\n`);
      const release = claimOwner(ownerFile);
      log(`postgres: started PostgreSQL ${bin.major} on ${LOOPBACK}:${port} (pid ${child.pid}, data ${dataDir})`);
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
    if (attempt < 3 && /could not bind|Address already in use/i.test(tail)) {
      log(`postgres: port ${port} was taken, retrying on another port`);
      continue;
    }
    cleanupSocket();
    throw new Error(
      `postgres: the server did not become ready (${problem}). Log ${child.logFile}:\n${tail}`,
    );
  }
}

function adminUrlFor(port: number): string {
  return `postgres://postgres@${LOOPBACK}:${port}/postgres`;
}

