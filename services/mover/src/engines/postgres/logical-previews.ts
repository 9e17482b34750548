/**
 * Masked row previews of a Postgres target, by logical decoding: one pgoutput slot per database next to the physical
 * slot, and a publication of every table (`FOR ALL TABLES`) for it to read. The WAL segments are still what the
 * store keeps; the logical slot is only read (peeked) up to the end of each segment being uploaded and advanced once
 * the segment is in the store, so a crash loses no previews. The server itself picks the sample rows (the first
 * `rows` of each table and kind among the transactions that committed in the segment), so only those rows and the
 * tables' schemas cross the wire; a masked column becomes `***` here, before anything is written anywhere.
 */
import type pg from 'pg';
import { logicalSlotName, type DatabaseAccess, type PreviewRow, type PreviewSettings, type SegmentPreviews, type TablePreviews } from '@sigil/proto/strata-jobs';
import { compileMask, cutValue, namedRow } from '../previews.ts';
import { MESSAGE, parseChange, parseRelation, type RelationMessage, type Tuple } from './pgoutput.ts';
import { listDatabases } from './server.ts';
import { open, quoteIdent } from './shared.ts';
import { formatLsn, parseLsn } from './wal.ts';

/** What to run on a server without logical decoding, in words a database administrator acts on. */
export const WAL_LEVEL_FIX = "ALTER SYSTEM SET wal_level = 'logical'; then restart the server";

interface DatabaseSlot {
  database: string;
  slot: string;
  client: pg.Client;
  /** Where the slot began when this streamer created it: segments ending before it have no previews. */
  createdAt?: bigint;
}

/**
 * The server's sample: every Relation message, and the first `$6` changes of each table and kind among the
 * transactions whose commit lies in [$4, $5), in the order pgoutput sent them. pgoutput sends whole transactions in
 * commit order, each after its Begin (which holds the commit position): a change's commit is the newest Begin's so
 * far. The window runs over narrow rows (position, kind and table, commit), and only the chosen rows' messages are
 * read again; a window over the messages themselves sorted megabytes per segment (ten times slower).
 */
const SAMPLE_SQL = `
WITH c AS MATERIALIZED (
  SELECT t.ord, t.data
  FROM pg_logical_slot_peek_binary_changes($1, $2::pg_lsn, NULL, 'proto_version', '1', 'publication_names', $3) WITH ORDINALITY AS t(lsn, xid, data, ord)
), k AS (
  SELECT ord, get_byte(data, 0) AS kind,
         get_byte(data, 0)::bigint * 4294967296 + ('x' || encode(substr(data, 2, 4), 'hex'))::bit(32)::bigint AS table_kind,
         max(CASE WHEN get_byte(data, 0) = ${MESSAGE.begin} THEN ('x' || encode(substr(data, 2, 8), 'hex'))::bit(64)::bigint END) OVER (ORDER BY ord) AS commit_at
  FROM c
), picked AS (
  SELECT ord FROM (
    SELECT ord, row_number() OVER (PARTITION BY table_kind ORDER BY ord) AS n
    FROM k WHERE kind IN (${MESSAGE.insert}, ${MESSAGE.update}, ${MESSAGE.delete}) AND commit_at >= $4::bigint AND commit_at < $5::bigint
  ) numbered WHERE n <= $6
)
SELECT ord, data FROM c WHERE get_byte(data, 0) = ${MESSAGE.relation} OR ord IN (SELECT ord FROM picked)
ORDER BY ord`;

/** The memory the previews' query may use on the source server (its session only). */
const PEEK_WORK_MEM = '48MB';

export class LogicalPreviews {
  private readonly slots: DatabaseSlot[] = [];
  private readonly settings: PreviewSettings;
  private readonly masks: RegExp[];
  private readonly publication: string;

  private constructor(settings: PreviewSettings, publication: string) {
    this.settings = settings;
    this.masks = compileMask(settings.mask);
    this.publication = publication;
  }

  /**
   * Opens (creating when missing) the publication and the logical slot of every database of the target; answers the
   * reason instead when the server cannot decode (wal_level) or the publication cannot be created.
   */
  static async open(access: DatabaseAccess, slot: string, databases: string[] | undefined, settings: PreviewSettings): Promise<{ previews: LogicalPreviews } | { problem: string }> {
    const previews = new LogicalPreviews(settings, slot);
    try {
      const names = await listDatabases(access, databases?.length ? databases : ['*']);
      for (const database of names) {
        const client = await open(access, database);
        previews.slots.push({ database, slot: '', client });
        // A segment's decoded changes (16 MiB of WAL makes about as much) stay in memory instead of temporary files.
        await client.query(`SET work_mem = '${PEEK_WORK_MEM}'`);
        const level = (await client.query<{ level: string }>(`SELECT current_setting('wal_level') AS level`)).rows[0]?.level;
        if (level !== 'logical') {
          await previews.close();
          return { problem: `wal_level is ${level ?? 'unknown'} on the server: masked row previews of Postgres need wal_level = logical (${WAL_LEVEL_FIX})` };
        }
        const problem = await previews.ensurePublication(client, database);
        if (problem) {
          await previews.close();
          return { problem };
        }
        Object.assign(previews.slots.at(-1)!, await ensureLogicalSlot(client, slot));
      }
      return { previews };
    } catch (error) {
      await previews.close();
      throw error;
    }
  }

  private async ensurePublication(client: pg.Client, database: string): Promise<string | undefined> {
    const found = await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [this.publication]);
    if (found.rowCount) return undefined;
    try {
      await client.query(`CREATE PUBLICATION ${quoteIdent(this.publication)} FOR ALL TABLES`);
      return undefined;
    } catch (error) {
      return `the publication ${this.publication} that previews read could not be created in database ${database} (${(error as Error).message}): as a superuser, run CREATE PUBLICATION ${quoteIdent(this.publication)} FOR ALL TABLES; in it`;
    }
  }

  /** The previews of the transactions that committed in [start, end): the segment (or the part of it) being uploaded. */
  async forSegment(start: bigint, end: bigint): Promise<SegmentPreviews> {
    const tables: Record<string, TablePreviews> = {};
    for (const entry of this.slots) {
      if (entry.createdAt !== undefined && end <= entry.createdAt) {
        throw new Error(`the logical decoding slot of database ${entry.database} was created at ${formatLsn(entry.createdAt)}, after this segment`);
      }
      const { rows } = await entry.client.query<{ data: Buffer }>(SAMPLE_SQL, [entry.slot, formatLsn(end), this.publication, start.toString(), end.toString(), this.settings.rows]);
      this.collect(entry.database, rows, tables);
    }
    return { tables: Object.fromEntries(Object.entries(tables).sort(([a], [b]) => a.localeCompare(b))) };
  }

  /** Turns the server's sample into named, cut and masked rows: each row named by its table's schema as of the change. */
  private collect(database: string, rows: Array<{ data: Buffer }>, tables: Record<string, TablePreviews>): void {
    const relations = new Map<number, RelationMessage>();
    const { maxValueLength } = this.settings;
    for (const { data } of rows) {
      if (data[0] === MESSAGE.relation) {
        const relation = parseRelation(data);
        relations.set(relation.relid, relation);
        continue;
      }
      const change = parseChange(data, maxValueLength);
      const relation = relations.get(change.relid);
      const names = relation?.columns.map((c) => c.name) ?? [];
      const named = (tuple: Tuple, keyOnly = false): PreviewRow => {
        const image: Tuple = new Map();
        for (const [position, value] of tuple) {
          // A key-only old tuple carries the other columns as NULL: they are unknown, not null.
          if (keyOnly && !relation?.columns[position - 1]?.key) continue;
          image.set(position, value === null ? null : cutValue(value, maxValueLength));
        }
        return namedRow(names, image, this.masks);
      };
      const table = `${database}.${relation?.schema ?? '?'}.${relation?.table ?? `relation ${change.relid}`}`;
      const samples = (tables[table] ??= { inserts: [], updates: [], deletes: [] });
      if (change.kind === 'insert') samples.inserts.push(named(change.row));
      else if (change.kind === 'delete') samples.deletes.push(named(change.before.row, change.before.keyOnly));
      else samples.updates.push({ before: change.before ? named(change.before.row, change.before.keyOnly) : {}, after: named(change.row) });
    }
  }

  /** Everything committed before `end` has its previews in the store: the server may forget it. */
  async advance(end: bigint): Promise<void> {
    for (const { client, slot } of this.slots) {
      await client.query(
        `SELECT pg_replication_slot_advance($1, LEAST($2::pg_lsn, pg_current_wal_flush_lsn())) FROM pg_replication_slots WHERE slot_name = $1 AND confirmed_flush_lsn < $2::pg_lsn`,
        [slot, formatLsn(end)],
      );
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map(({ client }) => client.end().catch(() => undefined)));
    this.slots.length = 0;
  }
}

/** The database's logical slot of this target, created at the current position when missing. */
async function ensureLogicalSlot(client: pg.Client, physicalSlot: string): Promise<{ slot: string; createdAt?: bigint }> {
  const oid = Number((await client.query<{ oid: string }>('SELECT oid::text AS oid FROM pg_database WHERE datname = current_database()')).rows[0]?.oid);
  const slot = logicalSlotName(physicalSlot, oid);
  const found = await client.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [slot]);
  if (found.rowCount) return { slot };
  const created = await client.query<{ lsn: string }>(`SELECT lsn::text AS lsn FROM pg_create_logical_replication_slot($1, 'pgoutput')`, [slot]);
  return { slot, createdAt: parseLsn(created.rows[0]!.lsn) };
}

/**
 * Drops a target's logical slots (those not in use) and the publication each database has for them, so the server
 * keeps no WAL for previews nobody makes any more; answers the slots dropped. `client`: any database of the server.
 */
export async function releaseLogicalSlots(client: pg.Client, access: DatabaseAccess, slot: string): Promise<string[]> {
  const { rows } = await client.query<{ slot_name: string; datoid: string; database: string }>(
    `SELECT slot_name, datoid::text AS datoid, database FROM pg_replication_slots WHERE slot_type = 'logical' AND NOT active`,
  );
  const dropped: string[] = [];
  for (const row of rows.filter((r) => r.slot_name === logicalSlotName(slot, Number(r.datoid)))) {
    await client.query('SELECT pg_drop_replication_slot($1)', [row.slot_name]);
    dropped.push(row.slot_name);
    const other = await open(access, row.database).catch(() => undefined);
    await other?.query(`DROP PUBLICATION IF EXISTS ${quoteIdent(slot)}`).catch(() => undefined);
    await other?.end().catch(() => undefined);
  }
  return dropped;
}
