import { Transform, type TransformCallback } from 'node:stream';

const HEADER = /^-- (Table structure for table|Dumping data for table|Temporary view structure for view|Final view structure for view|Temporary table structure for view|Dumping routines for database|Dumping events for database) (.*)$/;
/** A header is a short line; a line start held back longer than this is an ordinary (data) line. */
const MAX_HEADER = 4096;

/**
 * Keeps, of a mariadb-dump stream, the sections of the tables asked for (structure, rows, triggers) and the
 * session settings around them; other tables, views, routines and events are left out. Lines are judged by their
 * beginning only: rows of data (long INSERT lines) stream through without being held whole.
 */
export class TableSectionFilter extends Transform {
  private readonly wanted: Set<string>;
  private keep = true;
  /** The current line is kept although its section is not (a session setting). */
  private alwaysKept = false;
  private pending: Buffer | undefined;
  private atLineStart = true;

  constructor(tables: string[]) {
    super();
    this.wanted = new Set(tables.map((t) => t.slice(t.lastIndexOf('.') + 1)));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    let pos = 0;
    while (pos < data.length) {
      if (this.atLineStart) {
        const end = data.indexOf(0x0a, pos);
        if (end < 0 && data.length - pos < MAX_HEADER) {
          this.pending = data.subarray(pos);
          break;
        }
        this.judge(data.subarray(pos, end < 0 ? Math.min(data.length, pos + MAX_HEADER) : end).toString('utf8'));
      }
      const end = data.indexOf(0x0a, pos);
      const stop = end < 0 ? data.length : end + 1;
      if (this.keep || this.alwaysKept) this.push(data.subarray(pos, stop));
      this.atLineStart = end >= 0;
      pos = stop;
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.pending?.length) {
      this.judge(this.pending.toString('utf8'));
      if (this.keep || this.alwaysKept) this.push(this.pending);
    }
    callback();
  }

  /** Section headers switch keeping on or off; session settings restored at the end are kept whatever the section. */
  private judge(line: string): void {
    const header = HEADER.exec(line.trimEnd());
    if (header) {
      const table = /`((?:[^`]|``)*)`/.exec(header[2] ?? '')?.[1]?.replaceAll('``', '`');
      this.keep = (header[1] === 'Table structure for table' || header[1] === 'Dumping data for table') && table !== undefined && this.wanted.has(table);
    }
    this.alwaysKept = !this.keep && line.startsWith('/*!') && /\bSET\b/.test(line) && !/\b(ALTER|LOCK|UNLOCK)\b/i.test(line);
  }
}
