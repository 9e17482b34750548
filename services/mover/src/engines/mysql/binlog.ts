/**
 * MariaDB/MySQL binary logs as a change stream: `mariadb-binlog --read-from-remote-server --raw --stop-never`
 * copies the server's binlog files into a work directory; each file is a segment. A partial upload ends at the
 * last transaction end (never inside a GTID group), found by decoding the file locally. Positions are written
 * `<file>:<offset>`; a finished file ends where the next one starts (`<next file>:0`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Transform, type TransformCallback } from 'node:stream';
import { REPLAY_IDENTITY_STATEMENT, type DatabaseAccess } from '@sigil/proto/strata-jobs';
import { findExecutable } from '../process.ts';
import { StderrTail } from '../tool-error.ts';
import { readToolLines } from '../tool-lines.ts';
import { runTogether } from '../together.ts';
import { connectionArgs, envFor, mysqlTool, TOOL_DIRS } from './tools.ts';
import { binlogChangesReader, type BinlogChanges } from './binlog-changes.ts';

export function binlogTool(): string {
  return findExecutable('mariadb-binlog', TOOL_DIRS()) ?? findExecutable('mysqlbinlog', TOOL_DIRS()) ?? 'mariadb-binlog';
}

/** `mariadb-bin.000003` → 3. */
export function binlogIndex(name: string): number {
  const match = /\.(\d+)$/.exec(name);
  if (!match?.[1]) throw new Error(`"${name}" is not a binlog file name`);
  return Number(match[1]);
}

export function nextBinlog(name: string): string {
  const match = /^(.*\.)(\d+)$/.exec(name);
  if (!match?.[1] || !match[2]) throw new Error(`"${name}" is not a binlog file name`);
  return `${match[1]}${String(Number(match[2]) + 1).padStart(match[2].length, '0')}`;
}

export interface BinlogSummary {
  /** Offset right after the last complete transaction (or event outside one). */
  end: number;
  commits: number;
  firstTime?: string;
  lastTime?: string;
  /** What the complete transactions did (ROW format): rows by table, DDL statements in order. */
  changes: BinlogChanges;
}

const HEADER = /^#(\d\d)(\d\d)(\d\d) +(\d?\d):(\d\d):(\d\d) server id \d+ +end_log_pos (\d+)\b.*?\t(.*)$/;

/** The statement of a Query event that ends its GTID group (a non-transactional one, or an XA commit). */
const ENDS_GROUP = /^(?:COMMIT|ROLLBACK)\s*(?:\/\*|;|$)|^XA (?:COMMIT|ROLLBACK)\b/;

/**
 * Reads `mariadb-binlog` output (TZ=UTC) a line at a time: transaction ends, commits and their times (whole
 * seconds, as binlogs keep them). A GTID group is `ddl` (one event), `trans` (ends with an Xid event, an XA
 * prepare's XID event or an XA COMMIT query), or unflagged: a non-transactional START TRANSACTION … COMMIT query,
 * or, without START TRANSACTION, a standalone statement (one event).
 */
export function binlogReader(previews?: Parameters<typeof binlogChangesReader>[0]) {
  let end = 0;
  let commits = 0;
  let firstTime: string | undefined;
  let lastTime: string | undefined;
  let group: 'trans' | 'ddl' | 'plain' | 'standalone' | undefined;
  /** The Query event just read inside a group: its statement, on the lines after, may end the group. */
  let query: { offset: number; at: string } | undefined;
  const changes = binlogChangesReader(previews);
  const close = (offset: number, at: string) => {
    if (offset === 0) return;
    changes.commit();
    if (group !== undefined) {
      commits += 1;
      // Times can go backwards (a statement replayed with its own SET TIMESTAMP): keep the span.
      if (!firstTime || at < firstTime) firstTime = at;
      if (!lastTime || at > lastTime) lastTime = at;
    }
    group = undefined;
    end = offset;
  };
  return {
    line(line: string): void {
      const m = HEADER.exec(line);
      if (!m) {
        changes.text(line);
        if (group === 'standalone' && /^(?:START TRANSACTION|BEGIN)\b/.test(line)) group = 'plain';
        if (query && ENDS_GROUP.test(line)) close(query.offset, query.at);
        if (!/^(?:SET |\/\*)/.test(line)) query = undefined;
        return;
      }
      query = undefined;
      const [, yy, mo, dd, hh, mi, ss, pos, what = ''] = m;
      const at = `20${yy}-${mo}-${dd}T${hh!.padStart(2, '0')}:${mi}:${ss}.000000Z`;
      const offset = Number(pos);
      changes.event(what);
      if (/^GTID /.test(what)) {
        group = /\btrans\b/.test(what) ? 'trans' : /\bddl\b/.test(what) ? 'ddl' : 'standalone';
        return;
      }
      if (group === undefined || group === 'ddl' || group === 'standalone' || /^(?:Xid|XID) = /.test(what)) close(offset, at);
      else if (/^Query\b/.test(what)) query = { offset, at };
    },
    result(): BinlogSummary {
      return { end, commits, ...(firstTime ? { firstTime } : {}), ...(lastTime ? { lastTime } : {}), changes: changes.result() };
    },
  };
}

export function parseBinlogText(text: string, previews?: Parameters<typeof binlogChangesReader>[0]): BinlogSummary {
  const reader = binlogReader(previews);
  for (const line of text.split('\n')) reader.line(line);
  return reader.result();
}

/**
 * Summarises a binlog file; with `before` (what an earlier look at the same file found) only the part after its end
 * is decoded, so a file of a gigabyte is not read again at every cut. With `previews`, the row images are decoded
 * too (`-v`) and sampled.
 */
export async function summarizeBinlog(file: string, before?: BinlogSummary, previews?: Parameters<typeof binlogChangesReader>[0]): Promise<BinlogSummary> {
  const reader = binlogReader(previews);
  const from = before && before.end > 0 ? [`--start-position=${before.end}`] : [];
  const { code, stderr } = await readToolLines(binlogTool(), ['--no-defaults', '--base64-output=decode-rows', ...(previews ? ['-v'] : []), ...from, file], { ...process.env, TZ: 'UTC', LC_ALL: 'C' }, reader);
  // A copy taken while the server wrote may end inside an event: what came before it still counts.
  const tail = reader.result();
  if (code !== 0 && tail.end === 0 && !before) throw new Error(`mariadb-binlog ${file}: ${stderr.trim() || `exited with ${code}`}`);
  if (!before) return tail;
  const firstTime = [before.firstTime, tail.firstTime].filter(Boolean).sort()[0];
  const lastTime = [before.lastTime, tail.lastTime].filter(Boolean).sort().at(-1);
  const tables = before.changes.tables.clone();
  tables.merge(tail.changes.tables);
  const samples = before.changes.samples?.clone() ?? tail.changes.samples?.clone();
  if (samples && before.changes.samples && tail.changes.samples) samples.merge(tail.changes.samples);
  const changes = { tables, ddl: [...before.changes.ddl, ...tail.changes.ddl], ddlIn: [...before.changes.ddlIn, ...tail.changes.ddlIn], ...(samples ? { samples } : {}) };
  return { end: Math.max(before.end, tail.end), commits: before.commits + tail.commits, ...(firstTime ? { firstTime } : {}), ...(lastTime ? { lastTime } : {}), changes };
}

export interface BinlogReceiver {
  done: Promise<void>;
  stop(): Promise<void>;
}

/** Copies the server's binlogs, from `startFile` on, into `dir` as they are written. */
export function startBinlogReceiver(access: DatabaseAccess, dir: string, startFile: string): BinlogReceiver {
  const child: ChildProcess = spawn(binlogTool(), [...connectionArgs(access), '--read-from-remote-server', '--raw', '--stop-never', `--result-file=${dir}/`, startFile], {
    env: envFor(access),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const tail = new StderrTail();
  child.stderr?.on('data', (chunk: Buffer) => tail.push(chunk));
  let stopping = false;
  const done = new Promise<void>((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`mariadb-binlog could not start: ${error.message}`)));
    child.once('close', (code, signal) => (stopping ? resolve() : reject(new Error(tail.text() || `mariadb-binlog exited (${code ?? signal})`))));
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

/** REPLAY_IDENTITY_STATEMENT: lines a replay drops, so the server logs the replayed transactions as new ones. */
export const FORCED_IDENTITY = new RegExp(REPLAY_IDENTITY_STATEMENT, 'i');

/** A FORCED_IDENTITY statement shows in a line's first bytes: that much decides a line, however long. */
const DECIDING_BYTES = 96;

/**
 * Drops FORCED_IDENTITY lines from a replay stream, passing every other byte through as it comes: a line is held
 * only until its first DECIDING_BYTES are known (a multi-megabyte statement is not gathered in memory).
 */
export class ReplayIdentityFilter extends Transform {
  /** The start of the current line while undecided; then whether the rest of it goes through. */
  private head: Buffer = Buffer.alloc(0);
  private keep: boolean | undefined;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let from = 0;
    while (from < chunk.length) {
      const newline = chunk.indexOf(0x0a, from);
      const to = newline < 0 ? chunk.length : newline + 1;
      this.acceptPiece(chunk.subarray(from, to), newline >= 0);
      from = to;
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.keep === undefined && this.head.length) this.decide();
    callback();
  }

  /** A piece of the current line (with its newline when `ends`). */
  private acceptPiece(piece: Buffer, ends: boolean): void {
    if (this.keep === undefined) {
      this.head = this.head.length ? Buffer.concat([this.head, piece]) : piece;
      if (ends || this.head.length >= DECIDING_BYTES) this.decide();
    } else if (this.keep) {
      this.push(piece);
    }
    if (ends) this.keep = undefined;
  }

  private decide(): void {
    this.keep = !FORCED_IDENTITY.test(this.head.subarray(0, DECIDING_BYTES).toString('latin1'));
    if (this.keep) this.push(this.head);
    this.head = Buffer.alloc(0);
  }
}

/**
 * Replays binlog files into `target` (a restored copy of `source`): from `startPosition` of the first file, only
 * the events of `source`, renamed, up to the end of the second of `until` (binlogs keep whole seconds).
 */
export async function replayBinlogs(destination: DatabaseAccess, files: string[], startPosition: number, source: string, target: string, until?: string): Promise<void> {
  const stop = until ? new Date(Math.floor(Date.parse(until) / 1000) * 1000 + 1000).toISOString().replace('T', ' ').slice(0, 19) : undefined;
  const args = ['--no-defaults', `--start-position=${startPosition}`, `--database=${source}`, `--rewrite-db=${source}->${target}`, ...(stop ? [`--stop-datetime=${stop}`] : []), ...files];
  const reader = spawn(binlogTool(), args, { env: { ...process.env, TZ: 'UTC', LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const client = mysqlTool('client');
  const writer = spawn(client.command, [...connectionArgs(destination), target], { env: envFor(destination), stdio: ['pipe', 'ignore', 'pipe'] });
  reader.stdout.pipe(new ReplayIdentityFilter()).pipe(writer.stdin);
  writer.stdin.on('error', () => {});
  const finished = (child: ChildProcess, tool: string) => {
    const tail = new StderrTail();
    child.stderr?.on('data', (chunk: Buffer) => tail.push(chunk));
    return new Promise<void>((resolve, reject) => {
      child.once('error', (error) => reject(new Error(`${tool} could not start: ${error.message}`)));
      child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${tool}: ${tail.text() || `exited with ${code}`}`))));
    });
  };
  // A client that fails leaves the reader blocked on a full pipe, and the reverse: stop both before reporting.
  await runTogether(finished(reader, 'mariadb-binlog'), finished(writer, client.tool), () => {
    reader.kill('SIGTERM');
    writer.kill('SIGTERM');
  });
}
