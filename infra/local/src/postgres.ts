import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { errorMessage, LOOPBACK, pickPort, sleep } from './net.ts';
import { adoptProcess, claimOwner, ownerAlive, pidAlive, spawnServer, which } from './process.ts';
import { ensureReachable as reachable, readNumber, runAsUser, safeReaddir, serverStateDir, socketDirFor, type RunAs, type ServerIdentity } from './server-user.ts';
import type { ManagedProcess } from './process.ts';

const execFileAsync = promisify(execFile);

const POSTGRES: ServerIdentity = {
  product: 'PostgreSQL',
  account: 'postgres',
  packageName: 'postgresql',
  useraddOptions: '--system --home /var/lib/postgresql',
  urlVariable: 'POSTGRES_URL',
  slug: 'postgres',
};

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
  /**
   * false for throwaway servers (tests): no fsync, so a crash of the machine may lose what a crash of the server
   * never does. Default true. A server left running is adopted with the settings it has.
   */
  durable?: boolean;
  /** Server settings on top of the stack's own (`-c name=value`), e.g. `{ wal_level: 'replica' }` to test a server without logical decoding. */
  settings?: Record<string, string>;
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


/** A remembered port, if it is one. */
function readPort(file: string): number | undefined {
  const port = readNumber(file);
  return port !== undefined && port < 65536 ? port : undefined;
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

/** When this machine started (Linux), in ms since the epoch; undefined elsewhere. */
function bootTime(): number | undefined {
  try {
    const found = /^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'));
    return found ? Number(found[1]) * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A server run without fsync survives its own crash but not the machine's: when its lock file is older than this boot,
 * it was running when the machine went down, and its data directory is discarded (a throwaway server starts afresh).
 * Answers whether it was.
 */
export function discardAfterMachineCrash(dataDir: string, log: (line: string) => void, bootedAt = bootTime()): boolean {
  let lockedAt: number;
  try {
    lockedAt = fs.statSync(path.join(dataDir, 'postmaster.pid')).mtimeMs;
  } catch {
    return false;
  }
  if (bootedAt === undefined || lockedAt >= bootedAt) return false;
  log(`postgres: ${dataDir} was running without fsync when the machine went down; starting afresh`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  return true;
}

/**
 * Logical decoding on (masked row previews of Postgres targets keep a pgoutput slot per database next to the physical
 * one), with room for the slots of many targets: physical and logical slots share `max_replication_slots`.
 */
const LOGICAL_DECODING = ['-c', 'wal_level=logical', '-c', 'max_replication_slots=64', '-c', 'max_wal_senders=32'];

export async function startPostgres(options: StartPostgresOptions): Promise<PostgresHandle> {
  const { log } = options;
  const stateDir = serverStateDir(POSTGRES, options.stateDir, runAsUser(POSTGRES), log);
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const dataDir = path.join(stateDir, 'postgres');
  if (options.durable === false) discardAfterMachineCrash(dataDir, log);
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
  const user = runAsUser(POSTGRES);
  if (user) reachable(POSTGRES, dataDir, user, stateDir);

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

  const socket = socketDirFor(stateDir, user, 'run', '.s.PGSQL.65535.lock', 'sigil-pg-');
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
      args: ['-D', dataDir, '-p', String(port), '-k', socket.dir, '-c', `listen_addresses=${LOOPBACK}`, '-c', 'max_connections=200', ...LOGICAL_DECODING, ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]), ...(options.durable === false ? ['-c', 'fsync=off'] : [])],
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

