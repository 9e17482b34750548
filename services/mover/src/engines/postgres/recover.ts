/**
 * Point-in-time recovery of a physical base backup: a private PostgreSQL of the backup's major version runs on
 * the restored data directory (Unix socket only, in a directory of its own), replays WAL segments fetched
 * beforehand up to the target time, and is promoted; its databases are then copied where the user asked.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { promisify } from 'node:util';
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { findExecutable } from '../process.ts';
import { StderrTail } from '../tool-error.ts';
import { withClient } from './shared.ts';

const execFileAsync = promisify(execFile);

export interface RecoveryTarget {
  /** RFC 3339; absent: replay everything fetched (the end of the base, or the end of the segments). */
  time?: string;
}

export interface RecoveredServer {
  access: DatabaseAccess;
  /** What the server's log said about where recovery stopped. */
  stoppedAt: string;
  stop(): Promise<void>;
}

interface RunAs {
  uid: number;
  gid: number;
}

/** PostgreSQL refuses to run as root: a root mover runs the private server as the `postgres` account. */
function runAs(): RunAs | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (!uid || !gid) throw new Error('running as root, and there is no postgres account to run the recovery server as');
  return { uid: Number(uid), gid: Number(gid) };
}

function serverBinaries(major: number): { pgCtl: string; postgres: string } {
  const dirs = [`/usr/lib/postgresql/${major}/bin`, `/usr/pgsql-${major}/bin`, `/usr/local/pgsql-${major}/bin`];
  const pgCtl = findExecutable('pg_ctl', dirs);
  const postgres = findExecutable('postgres', dirs);
  if (!pgCtl || !postgres) throw new Error(`recovering a PostgreSQL ${major} backup needs the PostgreSQL ${major} server binaries on the mover (Debian: apt-get install postgresql-${major})`);
  return { pgCtl, postgres };
}

/** Extracts a pg_basebackup tar from stdin into `dataDir`. */
export function extractTar(dataDir: string): { stdin: Writable; done: Promise<void> } {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const child = spawn('tar', ['-x', '-f', '-', '-C', dataDir], { stdio: ['pipe', 'ignore', 'pipe'] });
  const tail = new StderrTail();
  child.stderr.on('data', (chunk: Buffer) => tail.push(chunk));
  child.stdin.on('error', () => {});
  const done = new Promise<void>((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`tar could not start: ${error.message}`)));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar: ${tail.text() || `exited with ${code}`}`))));
  });
  return { stdin: child.stdin, done };
}

function chownTree(root: string, user: RunAs): void {
  fs.chownSync(root, user.uid, user.gid);
  for (const entry of fs.readdirSync(root, { withFileTypes: true, recursive: true })) {
    fs.lchownSync(path.join(entry.parentPath, entry.name), user.uid, user.gid);
  }
}

const quote = (value: string) => `'${value.replaceAll("'", "''")}'`;

/**
 * Settings that make the copy private and quiet, whatever the source's configuration asked for. The copy lives only
 * until its databases are copied out (a mover that dies takes its work directory with it), so nothing is flushed to
 * disk: the end-of-recovery checkpoint and the copy run at memory speed.
 */
function recoverySettings(workDir: string, walDir: string, target: RecoveryTarget): string {
  const settings: Record<string, string> = {
    restore_command: quote(`cp "${walDir}/%f" "%p"`),
    recovery_target_action: quote('promote'),
    recovery_target_timeline: quote('current'),
    listen_addresses: quote(''),
    port: '5432',
    unix_socket_directories: quote(workDir),
    hot_standby: 'off',
    archive_mode: 'off',
    ssl: 'off',
    shared_preload_libraries: quote(''),
    logging_collector: 'off',
    log_destination: quote('stderr'),
    max_connections: '20',
    synchronous_standby_names: quote(''),
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    ...(target.time ? { recovery_target_time: quote(target.time.replace('T', ' ').replace('Z', '+00')), recovery_target_inclusive: 'on' } : {}),
  };
  return `\n# Strata point-in-time recovery\n${Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join('\n')}\n`;
}

/**
 * Starts the restored data directory `workDir/data` as a private server that recovers from `workDir/wal`;
 * resolves once it has been promoted, rejects with the server's own reason when recovery fails (e.g. the target
 * lies beyond the WAL it was given).
 */
export async function startRecovery(workDir: string, major: number, superuser: string, target: RecoveryTarget): Promise<RecoveredServer> {
  const { pgCtl } = serverBinaries(major);
  const dataDir = path.join(workDir, 'data');
  const walDir = path.join(workDir, 'wal');
  for (const stale of ['postmaster.pid', 'postmaster.opts', 'standby.signal']) fs.rmSync(path.join(dataDir, stale), { force: true });
  for (const file of ['postgresql.conf', 'pg_ident.conf']) if (!fs.existsSync(path.join(dataDir, file))) fs.writeFileSync(path.join(dataDir, file), '');
  fs.writeFileSync(path.join(dataDir, 'pg_hba.conf'), 'local all all trust\n');
  fs.appendFileSync(path.join(dataDir, 'postgresql.auto.conf'), recoverySettings(workDir, walDir, target));
  fs.writeFileSync(path.join(dataDir, 'recovery.signal'), '');
  fs.chmodSync(dataDir, 0o700);
  const user = runAs();
  if (user) chownTree(workDir, user);
  const logFile = path.join(workDir, 'recovery.log');
  const options = { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' }, cwd: workDir, ...(user ?? {}) };
  const stop = async () => {
    await execFileAsync(pgCtl, ['-D', dataDir, '-m', 'immediate', '-w', 'stop'], options).catch(() => undefined);
  };
  const access: DatabaseAccess = { engine: 'postgres', host: workDir, port: 5432, username: superuser, password: '' };
  try {
    // -w returns once the server is up (still recovering: it answers connections only after the promotion).
    await execFileAsync(pgCtl, ['-D', dataDir, '-l', logFile, '-w', '-t', '86400', 'start'], options);
    await waitForPromotion(access, async () => (await execFileAsync(pgCtl, ['-D', dataDir, 'status'], options).then(() => true, () => false)));
  } catch (error) {
    await stop();
    throw new Error(`recovery failed: ${recoveryProblem(logFile) || (error as Error).message}`, { cause: error });
  }
  return { access, stoppedAt: stoppedAt(logFile), stop };
}

/** Recovery ends with a promotion; until then the server refuses connections (no hot standby). */
async function waitForPromotion(access: DatabaseAccess, alive: () => Promise<boolean>): Promise<void> {
  for (;;) {
    try {
      const promoted = await withClient(access, undefined, async (client) => !(await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]?.r);
      if (promoted) return;
    } catch {
      // starting up or still recovering
    }
    if (!(await alive())) throw new Error('the recovery server stopped');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function logLines(logFile: string): string[] {
  try {
    return fs.readFileSync(logFile, 'utf8').split('\n');
  } catch {
    return [];
  }
}

/** The server's FATAL or PANIC lines, which say why recovery did not finish (connection refusals while it recovered aside). */
function recoveryProblem(logFile: string): string {
  const lines = logLines(logFile);
  const fatal = lines.filter((l) => /\b(FATAL|PANIC):/.test(l) && !/not accepting connections|the database system is (starting up|in recovery mode)/.test(l)).map((l) => l.replace(/^.*?(FATAL|PANIC):\s*/, ''));
  return fatal.join('; ') || lines.slice(-5).join(' ').trim();
}

/** `recovery stopping before commit of transaction 745, time 2026-...` or `redo done at 0/3000100`. */
function stoppedAt(logFile: string): string {
  const lines = logLines(logFile);
  const line = lines.find((l) => /recovery stopping (before|after)/.test(l)) ?? lines.find((l) => /redo done at|last completed transaction was at log time/.test(l));
  return line ? line.replace(/^.*?LOG:\s*/, '') : 'the end of the WAL it was given';
}
