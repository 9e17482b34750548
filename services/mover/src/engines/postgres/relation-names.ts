/**
 * Which table a relation file of the WAL is: `<database oid>/<relfilenode>` → `database.schema.table`, read from
 * the source server's catalogs and remembered for the life of the streamer. A file the catalog no longer lists (its
 * table was truncated, rewritten or dropped since) is still known when it was read before, or when it was its table's
 * first file (a new table's file is numbered as the table's OID).
 */
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { PROVIDER_DATABASES, withClient } from './shared.ts';
import type { FileKey } from './wal-changes.ts';

export interface RelationInfo {
  /** `database.schema.table`. */
  name: string;
  /** Only a `table`'s rows are counted: TOAST chunks and system catalogs (and the provider's database) are not rows of one. */
  kind: 'table' | 'toast' | 'catalog';
}

export interface RelationResolver {
  /** The relations of the files it can name (a file it cannot is left out). */
  resolve(files: FileKey[]): Promise<Map<FileKey, RelationInfo>>;
}

const RELATIONS = `SELECT pg_relation_filenode(c.oid)::text AS node, c.oid::text AS oid, n.nspname, c.relname, c.relkind::text AS relkind
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'm', 't')`;

interface RelationRow {
  node: string | null;
  oid: string;
  nspname: string;
  relname: string;
  relkind: string;
}

function infoOf(database: string, row: RelationRow): RelationInfo {
  const catalog = row.nspname === 'pg_catalog' || row.nspname === 'information_schema';
  const kind = row.relkind === 't' || row.nspname.startsWith('pg_toast') ? 'toast' : catalog ? 'catalog' : 'table';
  return { name: `${database}.${row.nspname}.${row.relname}`, kind };
}

/** Names files by asking the server, once per database and summary at most, only for files not known yet. */
export class ServerRelationNames implements RelationResolver {
  private readonly known = new Map<FileKey, RelationInfo>();
  private readonly databases = new Map<string, string>();
  private readonly access: DatabaseAccess;

  constructor(access: DatabaseAccess) {
    this.access = access;
  }

  async resolve(files: FileKey[]): Promise<Map<FileKey, RelationInfo>> {
    const missing = new Map<string, FileKey[]>();
    for (const file of new Set(files)) {
      if (this.known.has(file)) continue;
      const database = file.split('/')[0]!;
      missing.set(database, [...(missing.get(database) ?? []), file]);
    }
    for (const [oid, unknown] of missing) await this.readDatabase(oid, unknown);
    return new Map(files.flatMap((file) => (this.known.has(file) ? [[file, this.known.get(file)!] as const] : [])));
  }

  private async databaseName(oid: string): Promise<string | undefined> {
    if (!this.databases.has(oid)) {
      const rows = await withClient(this.access, undefined, async (client) => (await client.query<{ oid: string; datname: string }>('SELECT oid::text AS oid, datname FROM pg_database WHERE datallowconn')).rows);
      for (const row of rows) this.databases.set(row.oid, row.datname);
    }
    return this.databases.get(oid);
  }

  /** Reads the relations of one database; files still unknown are looked up as the first file of a table. */
  private async readDatabase(oid: string, unknown: FileKey[]): Promise<void> {
    const database = await this.databaseName(oid);
    if (!database) return; // dropped since, or not one a client may connect to
    if (PROVIDER_DATABASES.has(database)) {
      // The cloud provider's own database (rdsadmin, …): its users may not connect, and it holds no data of theirs.
      for (const file of unknown) this.known.set(file, { name: `${database}.${file.split('/')[1]}`, kind: 'catalog' });
      return;
    }
    await withClient(this.access, database, async (client) => {
      for (const row of (await client.query<RelationRow>(RELATIONS)).rows) if (row.node !== null) this.known.set(`${oid}/${row.node}`, infoOf(database, row));
      const first = unknown.filter((file) => !this.known.has(file)).map((file) => file.split('/')[1]!);
      if (!first.length) return;
      const { rows } = await client.query<RelationRow>(`${RELATIONS} AND c.oid = ANY($1::oid[])`, [first]);
      for (const row of rows) this.known.set(`${oid}/${row.oid}`, infoOf(database, row));
    });
  }
}
