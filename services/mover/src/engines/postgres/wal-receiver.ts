/**
 * Receiving a PostgreSQL server's WAL: a physical replication slot that holds what is not uploaded yet and the newest
 * segment that is (advanced by the streamer after each upload, never by the receiver), and `pg_receivewal` writing
 * segment files into a work directory, started at the slot's position by seeding the directory with an empty
 * partial segment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { findExecutable } from '../process.ts';
import { StderrTail } from '../tool-error.ts';
import { connectionArgs, pgBinDirs, toolEnvFor } from './tools.ts';
import { formatLsn, isWalFileName, parseLsn, walFileName } from './wal.ts';

export interface ServerWal {
  systemId: string;
  timeline: number;
  segmentBytes: number;
  major: number;
}

export async function serverWal(client: pg.Client): Promise<ServerWal> {
  const { rows } = await client.query<{ system: string; wal: string; bytes: string; num: string; recovery: boolean }>(
    `SELECT (SELECT system_identifier::text FROM pg_control_system()) AS system,
            CASE WHEN pg_is_in_recovery() THEN '' ELSE pg_walfile_name(pg_current_wal_lsn()) END AS wal,
            pg_size_bytes(current_setting('wal_segment_size'))::text AS bytes,
            current_setting('server_version_num') AS num, pg_is_in_recovery() AS recovery`,
  );
  const row = rows[0];
  if (!row || row.recovery) throw new Error('the server is a standby; stream the change log from its primary');
  return { systemId: row.system, timeline: Number.parseInt(row.wal.slice(0, 8), 16), segmentBytes: Number(row.bytes), major: Math.floor(Number(row.num) / 10000) };
}

/** Only one streamer per target: a session lock on the source server, held as long as the streamer's connection lives. */
export async function lockStream(client: pg.Client, slot: string): Promise<boolean> {
  const { rows } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1)) AS locked`, [`strata-stream:${slot}`]);
  return rows[0]?.locked === true;
}

export interface SlotState {
  restartLsn: bigint;
  /** The server removed WAL the slot needed (max_slot_wal_keep_size): what was not uploaded is gone. */
  lost: boolean;
  created: boolean;
}

/** Creates the slot (reserving WAL at once) when missing; a slot that lost WAL is dropped and made anew. */
export async function ensureSlot(client: pg.Client, slot: string): Promise<SlotState> {
  const read = async () =>
    (await client.query<{ lsn: string | null; status: string | null }>(`SELECT restart_lsn::text AS lsn, wal_status AS status FROM pg_replication_slots WHERE slot_name = $1`, [slot])).rows[0];
  let row = await read();
  let lost = false;
  let created = false;
  if (row && (row.status === 'lost' || row.lsn === null)) {
    lost = true;
    await client.query('SELECT pg_drop_replication_slot($1)', [slot]);
    row = undefined;
  }
  if (!row) {
    await client.query('SELECT pg_create_physical_replication_slot($1, true)', [slot]);
    created = true;
    row = await read();
  }
  if (!row?.lsn) throw new Error(`replication slot ${slot} has no restart position`);
  return { restartLsn: parseLsn(row.lsn), lost, created };
}

/** Lets the server recycle WAL up to `lsn`: everything before it is in the store. */
export async function advanceSlot(client: pg.Client, slot: string, lsn: bigint): Promise<void> {
  await client.query(
    `SELECT pg_replication_slot_advance($1, $2::pg_lsn) FROM pg_replication_slots WHERE slot_name = $1 AND restart_lsn < $2::pg_lsn AND $2::pg_lsn <= pg_current_wal_flush_lsn()`,
    [slot, formatLsn(lsn)],
  );
}

/** A commit's timestamp is taken just before its record is inserted: moments this close to a read may still be on the way. */
const INSERT_MARGIN_MS = 50;
const PAGE_BYTES = 8192n;
/** The page headers a position right after a page boundary points past (short; long on a segment's first page). */
const SHORT_PAGE_HEADER = 24n;
const LONG_PAGE_HEADER = 40n;

/**
 * A moment on the server's own clock and where its WAL insertion stood right after: every commit timestamped
 * before `at` has its record before `lsn` (flushed or about to be). `lsn` is a record boundary.
 */
export async function walPoint(client: pg.Client, segmentBytes: number): Promise<{ at: Date; lsn: bigint }> {
  const row = (await client.query<{ at: Date; lsn: string }>('SELECT clock_timestamp() AS at, pg_current_wal_insert_lsn()::text AS lsn')).rows[0];
  if (!row) throw new Error('the server did not say where its WAL stands');
  return { at: new Date(row.at.getTime() - INSERT_MARGIN_MS), lsn: recordBoundary(parseLsn(row.lsn), segmentBytes) };
}

/** An insert position just past a page header names the page boundary a receiver's copy ends at. */
export function recordBoundary(lsn: bigint, segmentBytes: number): bigint {
  if (lsn % BigInt(segmentBytes) === LONG_PAGE_HEADER) return lsn - LONG_PAGE_HEADER;
  if (lsn % PAGE_BYTES === SHORT_PAGE_HEADER) return lsn - SHORT_PAGE_HEADER;
  return lsn;
}

export interface Receiver {
  /** Rejects with pg_receivewal's own message when it stops without being asked to. */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** Starts pg_receivewal into `dir` from the segment holding `start` (seeded as an empty partial so it begins there). */
export function startReceiver(access: DatabaseAccess, dir: string, timeline: number, start: bigint, segmentBytes: number, major: number): Receiver {
  const first = walFileName(timeline, start, segmentBytes);
  const seeded = path.join(dir, `${first}.partial`);
  if (!fs.readdirSync(dir).some((name) => name.startsWith(first))) {
    fs.writeFileSync(seeded, '');
    fs.truncateSync(seeded, segmentBytes);
  }
  const command = findExecutable('pg_receivewal', [`/usr/lib/postgresql/${major}/bin`, ...pgBinDirs()]) ?? 'pg_receivewal';
  const child: ChildProcess = spawn(command, [`--directory=${dir}`, '--no-loop', '--status-interval=1', ...connectionArgs(access)], {
    env: toolEnvFor(access),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const tail = new StderrTail();
  child.stderr?.on('data', (chunk: Buffer) => tail.push(chunk));
  let stopping = false;
  const done = new Promise<void>((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`pg_receivewal could not start: ${error.message}`)));
    child.once('close', (code, signal) => {
      if (stopping) resolve();
      else reject(new Error(tail.text() || `pg_receivewal exited (${code ?? signal})`));
    });
  });
  done.catch(() => {});
  return {
    done,
    async stop() {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await done.catch(() => undefined);
    },
  };
}

/** The segment files pg_receivewal finished, oldest first. */
export function completeSegments(dir: string, segmentBytes: number): string[] {
  return fs
    .readdirSync(dir)
    .filter((name) => isWalFileName(name) && fs.statSync(path.join(dir, name)).size === segmentBytes)
    .sort();
}

/** The segment being written (`<name>.partial`), if any. */
export function partialSegment(dir: string): string | undefined {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.partial') && isWalFileName(name.slice(0, -'.partial'.length)))
    .sort()
    .at(-1);
}
