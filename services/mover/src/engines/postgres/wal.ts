/**
 * PostgreSQL write-ahead log arithmetic and reading: LSNs, WAL file names, and what `pg_waldump` says about a
 * segment (where its last complete record ends, its commits and their times).
 */
import fs from 'node:fs';
import path from 'node:path';
import { findExecutable } from '../process.ts';
import { readToolLines } from '../tool-lines.ts';
import { pgBinDirs } from './tools.ts';
import { walChangesReader, type WalChanges, type WalTransaction } from './wal-changes.ts';

/** The default WAL segment size; the streamer reads the server's own `wal_segment_size`. */
export const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;

export function parseLsn(lsn: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(lsn.trim());
  if (!match) throw new Error(`"${lsn}" is not a WAL position (X/Y)`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

export function formatLsn(value: bigint): string {
  return `${(value >> 32n).toString(16).toUpperCase()}/${(value & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** The WAL file holding `lsn` on `timeline` (`pg_walfile_name`, but for the segment that contains the position). */
export function walFileName(timeline: number, lsn: bigint, segmentBytes = DEFAULT_SEGMENT_BYTES): string {
  const segno = lsn / BigInt(segmentBytes);
  const perXlogId = 0x100000000n / BigInt(segmentBytes);
  const hex = (n: bigint | number) => n.toString(16).toUpperCase().padStart(8, '0');
  return `${hex(timeline)}${hex(segno / perXlogId)}${hex(segno % perXlogId)}`;
}

/** Timeline and first position of a WAL file name. */
export function parseWalFileName(name: string, segmentBytes = DEFAULT_SEGMENT_BYTES): { timeline: number; start: bigint } {
  if (!/^[0-9A-F]{24}$/.test(name)) throw new Error(`"${name}" is not a WAL file name`);
  const timeline = Number.parseInt(name.slice(0, 8), 16);
  const perXlogId = 0x100000000n / BigInt(segmentBytes);
  const segno = BigInt(`0x${name.slice(8, 16)}`) * perXlogId + BigInt(`0x${name.slice(16, 24)}`);
  return { timeline, start: segno * BigInt(segmentBytes) };
}

export interface WalSummary {
  /** Right after the last complete record. */
  endPos: bigint;
  commits: number;
  firstTime?: string;
  lastTime?: string;
  /** Where the last complete record read starts: the next segment is read from there, for a record that crosses into it. */
  lastRecord?: bigint;
  /** The row changes of the transactions committed in it, and those still open at its end. */
  changes: WalChanges;
}

const COMMIT = /desc: (?:COMMIT|COMMIT_PREPARED \d+:?) (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) UTC/;
const RECORD = /lsn: ([0-9A-F]+\/[0-9A-F]+), prev [0-9A-F]+\/[0-9A-F]+, desc:/;
/** Where reading stopped: `invalid record length at X/Y` names the end itself. */
const END = /(?:(?:invalid record length|record with incorrect prev-link|contrecord is requested) at|could not find a valid record after) ([0-9A-F]+\/[0-9A-F]+)/;
/** Otherwise (e.g. a page not written yet: `invalid magic number`) the start of the last good record is a safe end. */
const FAILED_AFTER = /error in WAL record at ([0-9A-F]+\/[0-9A-F]+)/;

/** `2026-11-25 19:25:03.582201` (UTC) as RFC 3339 with microseconds kept. */
function commitTime(text: string): string {
  const [date, time] = text.split(' ') as [string, string];
  const [whole, fraction = ''] = time.split('.');
  return `${date}T${whole}.${fraction.padEnd(6, '0')}Z`;
}

/**
 * Reads pg_waldump's record lines (TZ=UTC) one at a time: the commits and their times, and where the valid records
 * end. Records starting at or before `skipThrough` (the previous segment's last one, read again to reach the record
 * that crosses into this segment) are not this segment's.
 */
export function waldumpReader(segmentStart: bigint, segmentBytes: number, skipThrough = -1n, open?: Map<number, WalTransaction>) {
  const changes = walChangesReader(open);
  let commits = 0;
  let firstTime: string | undefined;
  let lastTime: string | undefined;
  let endPos: bigint | undefined;
  let lastRecord: bigint | undefined;
  return {
    line(line: string): void {
      const record = RECORD.exec(line);
      if (record?.[1]) {
        const lsn = parseLsn(record[1]);
        if (lsn <= skipThrough) return;
        lastRecord = lsn;
        changes.line(line);
        const commit = COMMIT.exec(line);
        if (commit?.[1]) {
          const at = commitTime(commit[1]);
          commits += 1;
          firstTime ??= at;
          lastTime = at;
        }
      }
      const end = END.exec(line) ?? FAILED_AFTER.exec(line);
      if (end?.[1] && (endPos === undefined || END.test(line))) endPos = parseLsn(end[1]);
    },
    result(): WalSummary {
      // No error line: the records run to the end of the segment. An end inside the previous segment (the
      // crossing record not complete yet) is this segment's start.
      const found = endPos ?? (lastRecord === undefined ? segmentStart : segmentStart + BigInt(segmentBytes));
      const end = found < segmentStart ? segmentStart : found;
      return { endPos: end, commits, ...(firstTime ? { firstTime } : {}), ...(lastTime ? { lastTime } : {}), ...(lastRecord !== undefined ? { lastRecord } : {}), changes: changes.result() };
    },
  };
}

export function parseWaldump(output: string, segmentStart: bigint, segmentBytes: number, open?: Map<number, WalTransaction>): WalSummary {
  const reader = waldumpReader(segmentStart, segmentBytes, -1n, open);
  for (const line of output.split('\n')) reader.line(line);
  return reader.result();
}

/** pg_waldump of the server's major version (older majors cannot read newer WAL and the reverse). */
export function waldumpFor(major: number): string {
  const exact = findExecutable('pg_waldump', [`/usr/lib/postgresql/${major}/bin`, `/usr/pgsql-${major}/bin`]);
  const found = exact ?? findExecutable('pg_waldump', pgBinDirs());
  if (!found) throw new Error(`pg_waldump is not installed; the WAL of PostgreSQL ${major} cannot be read (install postgresql-${major} or the matching client tools)`);
  return found;
}

/** The segment before the one summarised, kept for the record that crosses from it into the next. */
export interface PreviousSegment {
  file: string;
  lastRecord: bigint;
  /** Its transactions still open at its end: their changes count where they commit. */
  open?: Map<number, WalTransaction>;
}

/**
 * Summarises one WAL file (complete or the current copy of a partial one), named as the segment it is. pg_waldump
 * reading one file leaves out the record that crosses into it from the one before (and, reading that one, the same
 * record): with `previous` (the file before it and its last record) it is read here, where it ends.
 */
export async function summarizeSegment(file: string, major: number, segmentBytes: number, previous?: PreviousSegment): Promise<WalSummary> {
  const name = path.basename(file);
  const { timeline, start } = parseWalFileName(name, segmentBytes);
  const before = previous && parseWalFileName(path.basename(previous.file), segmentBytes);
  if (!previous || !before || before.timeline !== timeline || before.start + BigInt(segmentBytes) !== start) return await readSegment(file, name, start, major, segmentBytes);
  // Both files side by side (links, no copies), read from the previous one's last record to the end of this one.
  const dir = fs.mkdtempSync(path.join(path.dirname(file), '.pair-'));
  try {
    fs.linkSync(previous.file, path.join(dir, path.basename(previous.file)));
    fs.linkSync(file, path.join(dir, name));
    return await readSegment(path.join(dir, name), name, start, major, segmentBytes, { from: previous.lastRecord, timeline, ...(previous.open ? { open: previous.open } : {}) });
  } catch {
    // The pair could not be read together (a previous file not what it seemed): this file alone, as before.
    return await readSegment(file, name, start, major, segmentBytes);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function readSegment(file: string, name: string, start: bigint, major: number, segmentBytes: number, pair?: { from: bigint; timeline: number; open?: Map<number, WalTransaction> }): Promise<WalSummary> {
  const reader = waldumpReader(start, segmentBytes, pair?.from, pair?.open);
  // Without a file name pg_waldump assumes timeline 1: a span names its timeline.
  const span = pair ? ['--timeline', String(pair.timeline), '--start', formatLsn(pair.from), '--end', formatLsn(start + BigInt(segmentBytes))] : [name];
  const { code, stderr } = await readToolLines(waldumpFor(major), ['--path', path.dirname(file), ...span], { ...process.env, TZ: 'UTC', LC_ALL: 'C' }, reader);
  // pg_waldump exits 1 when it meets the end of the valid records: that is how a partial segment ends.
  if (code !== 0 && !FAILED_AFTER.test(stderr) && !END.test(stderr)) throw new Error(`pg_waldump ${name}: ${stderr.trim() || `exited with ${code}`}`);
  return reader.result();
}

export function isWalFileName(name: string): boolean {
  return /^[0-9A-F]{24}$/.test(name);
}
