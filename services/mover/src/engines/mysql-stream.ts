/**
 * What the MySQL driver reads and rewrites in dump streams: the header line it puts in front of
 * mariadb-dump's output, the binlog position mariadb-dump writes into it, and the `ALTER DATABASE`
 * lines that name the source database.
 */
import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import type { Position } from './types.ts';

const HEADER_PREFIX = '-- strata-dump: ';

/** What a MySQL dump says about its source, on its first line (an SQL comment, so the dump stays plain SQL). */
export interface DumpHeader {
  v: 1;
  engine: 'mysql';
  database: string;
  charset?: string;
  collation?: string;
  server?: string;
}

export function encodeHeader(header: DumpHeader): Buffer {
  return Buffer.from(`${HEADER_PREFIX}${JSON.stringify(header)}\n`, 'utf8');
}

/** The header when the dump starts with one. */
export function decodeHeader(head: Buffer): DumpHeader | undefined {
  const end = head.indexOf(0x0a);
  const line = head.subarray(0, end < 0 ? head.length : end).toString('utf8');
  if (!line.startsWith(HEADER_PREFIX)) return undefined;
  try {
    const parsed = JSON.parse(line.slice(HEADER_PREFIX.length)) as DumpHeader;
    return parsed && typeof parsed === 'object' && parsed.engine === 'mysql' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Collects the head and the tail of a dump stream and finds the position mariadb-dump wrote with
 * `--master-data=2` (`-- CHANGE MASTER TO MASTER_LOG_FILE='f', MASTER_LOG_POS=n;` near the head;
 * MariaDB's `--gtid` puts `-- SET GLOBAL gtid_slave_pos='...'` at the end; MySQL writes
 * `SOURCE_LOG_FILE` and `GTID_PURGED`). Memory: the first `headBytes` and the last `tailBytes`.
 */
export class PositionSniffer {
  private head: Buffer[] = [];
  private headSize = 0;
  private tail: Buffer[] = [];
  private tailSize = 0;
  private readonly headBytes: number;
  private readonly tailBytes: number;

  constructor(headBytes = 4 * 1024 * 1024, tailBytes = 64 * 1024) {
    this.headBytes = headBytes;
    this.tailBytes = tailBytes;
  }

  push(chunk: Buffer): void {
    if (this.headSize < this.headBytes) {
      this.head.push(chunk);
      this.headSize += chunk.length;
    }
    this.tail.push(chunk);
    this.tailSize += chunk.length;
    while (this.tail.length > 1 && this.tailSize - (this.tail[0] as Buffer).length >= this.tailBytes) {
      this.tailSize -= (this.tail.shift() as Buffer).length;
    }
  }

  position(): Position | undefined {
    const head = Buffer.concat(this.head).toString('latin1');
    const tail = Buffer.concat(this.tail).toString('latin1');
    const file =
      /^-- CHANGE MASTER TO MASTER_LOG_FILE='([^']+)', MASTER_LOG_POS=(\d+)/m.exec(head) ??
      /^-- CHANGE REPLICATION SOURCE TO SOURCE_LOG_FILE='([^']+)', SOURCE_LOG_POS=(\d+)/m.exec(head);
    if (!file) return undefined;
    const position: Position = { binlogFile: file[1] ?? '', binlogPos: Number(file[2]) };
    const gtid =
      /^-- SET GLOBAL gtid_slave_pos='([^']*)'/m.exec(tail) ??
      /^-- SET GLOBAL gtid_slave_pos='([^']*)'/m.exec(head) ??
      /^(?:-- )?SET @@GLOBAL\.GTID_PURGED=(?:\/\*!80000 '\+'\*\/ )?'([^']*)'/m.exec(head);
    if (gtid?.[1]) position.gtidSet = gtid[1].replace(/\\n|\s+/g, '');
    return position;
  }
}

const PREFIX = Buffer.from('ALTER DATABASE `');
const NEEDLE = Buffer.from('\nALTER DATABASE `');
/** Longer lines starting like an ALTER DATABASE are not one of mariadb-dump's: pass them through. */
const MAX_LINE = 16 * 1024;

/** `ALTER DATABASE \`src\` CHARACTER SET x COLLATE y ;` -> `ALTER DATABASE CHARACTER SET x COLLATE y ;` (the current database). */
export function rewriteAlterDatabase(line: string): string | undefined {
  const match = /^ALTER DATABASE `(?:[^`]|``)*` (CHARACTER SET \S+(?: COLLATE \S+)?\s*;?\s*)$/.exec(line);
  return match ? `ALTER DATABASE ${match[1]}` : undefined;
}

/**
 * mariadb-dump wraps routines, triggers and events whose database collation differs from the
 * database's current one in `ALTER DATABASE \`<source>\` CHARACTER SET ...` lines. Restored under
 * another name, those would alter (or fail on) the source database: this filter drops the name, so
 * they apply to the database being restored. Lines are matched only at line starts; the stream is
 * otherwise passed through untouched, without buffering more than a partial line.
 */
export class AlterDatabaseFilter extends Transform {
  private pending: Buffer | undefined;
  private atLineStart = true;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    const startsLine = this.pending ? true : this.atLineStart;
    this.pending = undefined;
    if (data.length === 0) {
      callback();
      return;
    }
    const parts: Buffer[] = [];
    let pos = 0;
    let holdFrom: number | undefined;
    const candidates: number[] = startsLine ? [0] : [];
    for (let k = data.indexOf(NEEDLE); k >= 0; k = data.indexOf(NEEDLE, k + 1)) candidates.push(k + 1);
    for (const c of candidates) {
      if (c < pos || data.length - c < PREFIX.length || !data.subarray(c, c + PREFIX.length).equals(PREFIX)) continue;
      const end = data.indexOf(0x0a, c);
      if (end < 0) {
        if (data.length - c <= MAX_LINE) holdFrom = c;
        break;
      }
      const rewritten = rewriteAlterDatabase(data.subarray(c, end).toString('utf8'));
      if (rewritten !== undefined) {
        parts.push(data.subarray(pos, c), Buffer.from(rewritten, 'utf8'));
        pos = end;
      }
    }
    if (holdFrom === undefined) {
      // A line start so close to the end that it may be the beginning of an ALTER DATABASE.
      const lastNewline = data.lastIndexOf(0x0a);
      const s = lastNewline >= 0 ? lastNewline + 1 : startsLine ? 0 : -1;
      const rest = data.length - s;
      if (s >= pos && s >= 0 && rest > 0 && rest < PREFIX.length && PREFIX.subarray(0, rest).equals(data.subarray(s))) holdFrom = s;
    }
    if (holdFrom !== undefined) {
      parts.push(data.subarray(pos, holdFrom));
      this.pending = Buffer.from(data.subarray(holdFrom));
      this.atLineStart = true;
    } else {
      parts.push(data.subarray(pos));
      this.atLineStart = data[data.length - 1] === 0x0a;
    }
    const out = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
    if (out.length > 0) this.push(out);
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.pending) {
      const rewritten = rewriteAlterDatabase(this.pending.toString('utf8'));
      this.push(rewritten !== undefined ? Buffer.from(rewritten, 'utf8') : this.pending);
      this.pending = undefined;
    }
    callback();
  }
}
