/**
 * The row changes in a stretch of WAL, from pg_waldump's record lines: Heap and Heap2 INSERT, MULTI_INSERT (its
 * tuples), UPDATE, HOT_UPDATE and DELETE records name the relation file (`rel <spc>/<db>/<relfilenode>`) and the
 * transaction. They count only once their transaction (or the top transaction of a subtransaction) commits; a
 * transaction still open at the end of the stretch is carried to the next one.
 *
 * The WAL names files, not tables, and holds no DDL text: which table a file is, whether a transaction that
 * created a file for a table and dropped its old one truncated or rewrote it, and whether it changed the schema
 * are decided afterwards (wal-summary.ts), with the server's catalog at hand.
 */

/** Files below this number are the system catalogs' own (FirstNormalObjectId): initdb made them. */
export const FIRST_NORMAL_OID = 16384;
/**
 * Catalogs that ANALYZE and VACUUM write, and their TOAST tables (a wide statistic goes there): not schema changes.
 * pg_statistic 2619 (TOAST 2840), pg_statistic_ext_data 3429 (TOAST 3430).
 */
const STATISTICS_CATALOGS = new Set([2619, 2840, 3429, 3430]);
const PG_CLASS = 1259;

export interface RowCounts {
  inserts: number;
  updates: number;
  deletes: number;
  /** Files emptied in place (TRUNCATE of a table created or truncated in the same transaction). */
  truncates: number;
}

/** A relation file: `<database oid>/<relfilenode>`. */
export type FileKey = string;

export interface WalTransaction {
  rows: Map<FileKey, RowCounts>;
  /** Files created in it (a new table, or the new file of a truncated or rewritten one). */
  created: Set<FileKey>;
  /** Files dropped when it committed. */
  dropped: FileKey[];
  /** Rows of system catalogs inserted, updated or deleted (pg_class updates apart). */
  catalogRows: number;
  /** pg_class rows updated: a rename, or the new file of a truncated table. */
  classUpdates: number;
  /** The databases (oids; 0 for the shared catalogs) whose system catalogs it changed. */
  catalogDatabases: Set<string>;
}

export interface WalChanges {
  /** Rows of committed transactions that created and dropped no file, by file. */
  rows: Map<FileKey, RowCounts>;
  /** Committed transactions that created or dropped files (DDL, TRUNCATE, rewrites), in commit order. */
  fileTransactions: WalTransaction[];
  /** Committed transactions among the others that changed the system catalogs. */
  schemaTransactions: number;
  /** The same, by the database (oid) whose catalogs they changed. */
  schemaTransactionsByDatabase: Map<string, number>;
  /** Transactions not committed or aborted yet, by xid. */
  open: Map<number, WalTransaction>;
}

const RECORD = /^rmgr: (\w+)\s+len [^,]*, tx:\s*(\d+), lsn: [0-9A-F]+\/[0-9A-F]+, prev [0-9A-F]+\/[0-9A-F]+, desc: (.*)$/;
const BLOCK_REL = /blkref #0: rel \d+\/(\d+)\/(\d+)/;
const FILE_PATH = /(?:base|pg_tblspc\/\d+\/[^/\s]+)\/(\d+)\/(\d+)/g;
const FLAGS = /flags:? 0x([0-9A-F]+)/i;
/** XLH_DELETE_IS_SUPER: an insert that lost an ON CONFLICT race, taken back. */
const SUPER_DELETE = 0x08;

export function emptyChanges(): WalChanges {
  return { rows: new Map(), fileTransactions: [], schemaTransactions: 0, schemaTransactionsByDatabase: new Map(), open: new Map() };
}

function newTransaction(): WalTransaction {
  return { rows: new Map(), created: new Set(), dropped: [], catalogRows: 0, classUpdates: 0, catalogDatabases: new Set() };
}

export function addRows(into: Map<FileKey, RowCounts>, file: FileKey, kind: keyof RowCounts, n: number): void {
  let counts = into.get(file);
  if (!counts) {
    counts = { inserts: 0, updates: 0, deletes: 0, truncates: 0 };
    into.set(file, counts);
  }
  counts[kind] += n;
}

function mergeTransaction(into: WalTransaction, from: WalTransaction): void {
  for (const [file, counts] of from.rows) for (const kind of ['inserts', 'updates', 'deletes', 'truncates'] as const) if (counts[kind]) addRows(into.rows, file, kind, counts[kind]);
  for (const file of from.created) into.created.add(file);
  into.dropped.push(...from.dropped);
  into.catalogRows += from.catalogRows;
  into.classUpdates += from.classUpdates;
  for (const database of from.catalogDatabases) into.catalogDatabases.add(database);
}

function filesIn(text: string | undefined): FileKey[] {
  return text ? [...text.matchAll(FILE_PATH)].map((m) => `${m[1]}/${m[2]}`) : [];
}

/** The row change a Heap/Heap2 record makes: kind and number of rows, or undefined for any other record. */
function rowChange(rmgr: string, desc: string): { kind: keyof RowCounts; n: number } | undefined {
  const op = /^([A-Z_0-9]+)/.exec(desc)?.[1];
  if (rmgr === 'Heap2') {
    const multi = /^MULTI_INSERT(?:\+INIT)? (?:ntuples: )?(\d+)/.exec(desc);
    return multi?.[1] ? { kind: 'inserts', n: Number(multi[1]) } : undefined;
  }
  if (rmgr !== 'Heap') return undefined;
  if (op === 'INSERT') return { kind: 'inserts', n: 1 };
  if (op === 'UPDATE' || op === 'HOT_UPDATE') return { kind: 'updates', n: 1 };
  if (op === 'DELETE') return (Number.parseInt(FLAGS.exec(desc)?.[1] ?? '0', 16) & SUPER_DELETE) !== 0 ? { kind: 'inserts', n: -1 } : { kind: 'deletes', n: 1 };
  return undefined;
}

/** Gathers the changes of record lines (pg_waldump, TZ=UTC), from what `carried` left open. */
export function walChangesReader(carried?: Map<number, WalTransaction>) {
  const changes = emptyChanges();
  for (const [xid, tx] of carried ?? []) {
    const copy = newTransaction();
    mergeTransaction(copy, tx);
    changes.open.set(xid, copy);
  }
  const transaction = (xid: number) => {
    let tx = changes.open.get(xid);
    if (!tx) {
      tx = newTransaction();
      changes.open.set(xid, tx);
    }
    return tx;
  };
  /** The transaction and its subtransactions, taken out of the open ones. */
  const takeWithSubxacts = (xid: number, desc: string) => {
    const whole = newTransaction();
    const subxacts = /; subxacts:((?: \d+)+)/.exec(desc)?.[1]?.trim().split(' ').map(Number) ?? [];
    for (const id of [xid, ...subxacts]) {
      const tx = changes.open.get(id);
      if (tx) mergeTransaction(whole, tx);
      changes.open.delete(id);
    }
    return whole;
  };
  const commit = (xid: number, desc: string) => {
    const tx = takeWithSubxacts(xid, desc);
    tx.dropped.push(...filesIn(/; rels: ([^;]*)/.exec(desc)?.[1]));
    if (tx.created.size || tx.dropped.length) {
      changes.fileTransactions.push(tx);
      return;
    }
    for (const [file, counts] of tx.rows) for (const kind of ['inserts', 'updates', 'deletes', 'truncates'] as const) if (counts[kind]) addRows(changes.rows, file, kind, counts[kind]);
    if (tx.catalogRows === 0 && tx.classUpdates === 0) return;
    changes.schemaTransactions += 1;
    for (const database of tx.catalogDatabases) changes.schemaTransactionsByDatabase.set(database, (changes.schemaTransactionsByDatabase.get(database) ?? 0) + 1);
  };
  return {
    line(line: string): void {
      const record = RECORD.exec(line);
      if (!record?.[1] || !record[2] || record[3] === undefined) return;
      const [, rmgr, xidText, desc] = record;
      const xid = Number(xidText);
      if (rmgr === 'Transaction') {
        const prepared = /^(COMMIT|ABORT)_PREPARED (\d+)/.exec(desc);
        if (prepared?.[2]) {
          if (prepared[1] === 'COMMIT') commit(Number(prepared[2]), desc);
          else takeWithSubxacts(Number(prepared[2]), desc);
        } else if (/^COMMIT\b/.test(desc)) commit(xid, desc);
        else if (/^ABORT\b/.test(desc)) takeWithSubxacts(xid, desc);
        return;
      }
      if (xid === 0) return;
      if (rmgr === 'Storage') {
        const created = /^CREATE (\S+)/.exec(desc);
        if (created) for (const file of filesIn(created[1])) transaction(xid).created.add(file);
        const truncated = /^TRUNCATE (\S+)/.exec(desc);
        if (truncated) for (const file of filesIn(truncated[1])) addRows(transaction(xid).rows, file, 'truncates', 1);
        return;
      }
      const change = rowChange(rmgr, desc);
      const rel = change && BLOCK_REL.exec(desc);
      if (!change || !rel?.[1] || !rel[2]) return;
      const node = Number(rel[2]);
      const tx = transaction(xid);
      if (node >= FIRST_NORMAL_OID) addRows(tx.rows, `${rel[1]}/${node}`, change.kind, change.n);
      else if (node === PG_CLASS && change.kind === 'updates') {
        tx.classUpdates += 1;
        tx.catalogDatabases.add(rel[1]);
      } else if (!STATISTICS_CATALOGS.has(node)) {
        tx.catalogRows += 1;
        tx.catalogDatabases.add(rel[1]);
      }
    },
    result(): WalChanges {
      return changes;
    },
  };
}
