/**
 * A segment's masked row previews: the sampled rows named by the server's column names (MariaDB/MySQL row images are
 * positional), masked, and stored beside the segment encrypted to the store's ageRecipients and catalogRecipients.
 * A row never goes into a log or an error message: errors name tables and positions only.
 */
import { Readable } from 'node:stream';
import type mysql from 'mysql2/promise';
import { segmentPreviewsKey, type SegmentPreviews, type StreamJob } from '@sigil/proto/strata-jobs';
import { runUploadPipeline, type S3Client } from '@strata/stream';
import { maskedPreviews, type RowSamples, type TableColumns } from '../engines/previews.ts';
import { num, rows, str } from '../engines/mysql/shared.ts';

/** `shop.customers` → [`shop`, `customers`] (the database name is the part before the first dot). */
function split(table: string): [string, string] {
  const dot = table.indexOf('.');
  return dot < 0 ? ['', table] : [table.slice(0, dot), table.slice(dot + 1)];
}

/**
 * Column names of MariaDB/MySQL tables from information_schema, cached by table: read again for a table not cached,
 * and for every table once a segment holds schema statements.
 */
export class MysqlColumnNames {
  private readonly cache = new Map<string, string[] | undefined>();
  private readonly connection: mysql.Connection;

  constructor(connection: mysql.Connection) {
    this.connection = connection;
  }

  /** The column names of `tables`, by position; a table the server no longer has: undefined. */
  async load(tables: string[], refresh: boolean): Promise<Map<string, string[] | undefined>> {
    if (refresh) this.cache.clear();
    const missing = tables.filter((table) => !this.cache.has(table));
    if (missing.length) {
      const pairs = missing.map(split);
      const found = await rows(
        this.connection,
        `SELECT TABLE_SCHEMA AS db, TABLE_NAME AS tbl, COLUMN_NAME AS col, ORDINAL_POSITION AS pos FROM information_schema.COLUMNS WHERE ${pairs.map(() => '(TABLE_SCHEMA = ? AND TABLE_NAME = ?)').join(' OR ')} ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`,
        pairs.flat(),
      );
      const named = new Map<string, string[]>();
      for (const row of found) {
        const table = `${str(row.db)}.${str(row.tbl)}`;
        const columns = named.get(table) ?? [];
        columns[num(row.pos) - 1] = str(row.col);
        named.set(table, columns);
      }
      for (const table of missing) this.cache.set(table, named.get(table));
    }
    return new Map(tables.map((table) => [table, this.cache.get(table)]));
  }
}

/**
 * Whether a segment's schema statements may have changed a table's columns: any statement but a CREATE TABLE that
 * names it. Its rows are then masked whole (their positions may not be today's columns).
 */
export function columnsChanged(table: string, ddl: string[]): boolean {
  const name = split(table)[1].toLowerCase();
  return ddl.some((statement) => !/^\s*CREATE\s+TABLE\b/i.test(statement) && statement.toLowerCase().includes(name));
}

/** The previews of a MariaDB/MySQL segment's samples. */
export async function mysqlPreviews(samples: RowSamples, ddl: string[], names: MysqlColumnNames, mask: string[]): Promise<SegmentPreviews> {
  const tables = [...samples.tables.keys()];
  const known = tables.length ? await names.load(tables, ddl.length > 0) : new Map<string, string[] | undefined>();
  const columnsOf = (table: string): TableColumns => {
    const columns = known.get(table);
    return { ...(columns ? { names: columns } : {}), trusted: columns !== undefined && !columnsChanged(table, ddl) };
  };
  return maskedPreviews(samples, columnsOf, mask);
}

export function previewRows(previews: SegmentPreviews): number {
  return Object.values(previews.tables).reduce((n, t) => n + t.inserts.length + t.updates.length + t.deletes.length, 0);
}

/** Stores the previews beside the segment (`<segment key>.previews.age`); answers the key and its SHA-256. */
export async function uploadPreviews(job: StreamJob, client: S3Client, segmentKey: string, previews: SegmentPreviews, signal: AbortSignal): Promise<{ key: string; sha256: string }> {
  const key = segmentPreviewsKey(segmentKey);
  const stored = await runUploadPipeline({
    source: Readable.from([Buffer.from(JSON.stringify(previews))]),
    smallSource: true,
    compression: { algorithm: 'none', level: 'default', threads: 0 },
    recipients: [...job.store.ageRecipients, ...(job.store.catalogRecipients ?? [])],
    client,
    bucket: job.store.bucket,
    key,
    partSizeBytes: job.store.partSizeBytes,
    concurrency: 1,
    bandwidthBytesPerSecond: 0,
    stallTimeoutMs: 60_000,
    signal,
  });
  return { key, sha256: stored.sha256 };
}
