/**
 * The engine layer of the mover: one driver per database engine, spawning the engine's own tools
 * for dumps and restores and reading its catalog for server info, positions and inventories.
 * Field names follow the spec (part 2.1: ServerInfo, Inventory, Manifest.position).
 */
import type { Readable, Writable } from 'node:stream';
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import type { CompressionOptions } from '@strata/stream/zstd';

export type { DatabaseAccess };

export type DriverEngine = 'postgres' | 'mysql';

/** Spec 2.1 ServerInfo. */
export interface ServerInfo {
  /** The server's own version string (`15.20 (Debian ...)`, `10.11.19-MariaDB-0+deb12u1`). */
  version: string;
  /** `host:port` as the mover reached it. */
  host: string;
  /** What identifies this server instance: the Postgres system identifier; MySQL `server_uuid`, MariaDB `hostname:port/server_id`. */
  systemID: string;
  major: number;
  /** A few useful server settings, as strings. */
  settings: Record<string, string>;
  /** Sum of the sizes of the databases the user can see. */
  sizeBytes: number;
}

/** Spec 2.1 Manifest.position; only the members that apply are set. */
export interface Position {
  startLSN?: string;
  endLSN?: string;
  startWAL?: string;
  timeline?: number;
  binlogFile?: string;
  binlogPos?: number;
  gtidSet?: string;
}

export interface InventoryColumn {
  name: string;
  type: string;
  nullable: boolean;
  default?: string;
}

export interface InventoryIndex {
  name: string;
  columns: string[];
  unique: boolean;
  def?: string;
}

export interface InventoryForeignKey {
  name: string;
  columns: string[];
  /** `schema.table` (postgres) or `table` (`database.table` when it points into another MySQL database). */
  refTable: string;
  refColumns: string[];
}

export interface InventoryTable {
  name: string;
  schema?: string;
  /** postgres: table, partitioned table, materialized view, foreign table; mysql: BASE TABLE, SYSTEM VERSIONED, SEQUENCE. */
  kind?: string;
  rowsEstimate: number;
  exactRows?: number;
  totalBytes: number;
  tableBytes?: number;
  indexBytes?: number;
  toastBytes?: number;
  columns: InventoryColumn[];
  primaryKey?: string[];
  indexes?: InventoryIndex[];
  foreignKeys?: InventoryForeignKey[];
  activity?: { inserts: number; updates: number; deletes: number; lastAutovacuum?: string };
  relfilenode?: number;
  /** The engine's identity of the table, kept across a rename: the Postgres relation OID, the InnoDB table id. */
  oid?: number;
  /** sha256 of the table's canonical schema description (not of its name, so a renamed table keeps it). */
  fingerprint: string;
}

export interface InventoryDatabase {
  name: string;
  sizeBytes: number;
  tables: InventoryTable[];
  /** sha256 of the database's canonical schema description; equal for a source and its restore. */
  schemaHash: string;
  oid?: number;
  extensions?: string[];
  schemas?: string[];
  views?: string[];
  routines?: string[];
  migrationTable?: string;
  migrationVersion?: string;
  /** The applied migrations the migration table records, oldest first (the newest MIGRATIONS_KEPT). */
  migrations?: string[];
}

/** Spec 2.1 Inventory (no row data). */
export interface Inventory {
  collectedAt: string;
  engine: DriverEngine;
  server: ServerInfo;
  databases: InventoryDatabase[];
  /** sha256 over the sorted `name schemaHash` lines of the databases. */
  schemaHash: string;
  notes?: string[];
  /** Per database: `<database>.charset`, `<database>.collation` (mysql) or `<database>.encoding`, `<database>.locale` (postgres). */
  extra?: Record<string, string>;
  /** How the target's exactCounts went: tables counted with count(*), the seconds it took, the tables left at their estimate with why. */
  exactCounts?: { tables: number; seconds: number; skipped: string[] };
}

export interface InventoryOptions {
  /** Count rows exactly for tables whose estimate is below maxRows, each count bounded by timeoutMs (spec BackupTarget.exactCounts). */
  exactCounts?: { maxRows: number; timeoutMs: number };
  /** The server's info when the caller read it already (a backup reads it first): not asked again. */
  server?: ServerInfo;
}

export interface DumpOptions {
  /** Tables whose rows are skipped (their definition is kept): `table` (any schema) or `schema.table`. */
  excludeData: string[];
  /** Tables left out entirely: `table` (any schema) or `schema.table`. */
  excludeTables: string[];
  /** Compress as the tool writes, with the zstd program where it is (the dump's `compressedBy` then says so). */
  compression?: CompressionOptions;
  /** Only these tables (with their indexes, constraints and triggers): `table` (any schema) or `schema.table`. */
  includeTables?: string[];
}

export interface DumpProcess {
  /** The dump stream. It ends only once the tool exited successfully; a failed tool destroys it with the error of `done`. */
  stdout: Readable;
  /** Resolves when the tool exited 0; rejects with the tool's own stderr message (last lines) otherwise, or when killed. */
  done: Promise<void>;
  /** The consistent position recorded inside the dump itself (mysql with binlog on); resolves once the stream ended. */
  position?: Promise<Position | undefined>;
  /** Warnings the tool printed on stderr (filled when it exits). */
  warnings: string[];
  /** The command lines run, without secrets (for the manifest's tools). */
  commands: string[][];
  /** Stops the tool (SIGTERM, then SIGKILL); `done` rejects. */
  kill(): void;
  /** Set when `stdout` is compressed already (the zstd program read the tool's output). */
  compressedBy?: CompressedBy;
}

/** A dump compressed by the zstd program as the tool wrote it. */
export interface CompressedBy {
  /** Raw bytes read so far. */
  rawProgress(): number;
  /** Once the dump is done: the exact raw bytes zstd read and the compressed bytes it wrote. */
  totals: Promise<{ readBytes: number; writtenBytes: number }>;
}

export interface RestoreOptions {
  /** Overrides what the dump says: postgres ENCODING / mysql CHARACTER SET. */
  charset?: string;
  /** Overrides what the dump says: postgres LOCALE / mysql COLLATE. */
  collation?: string;
  /** The database exists (an in-place, table-level restore): it is neither created nor dropped on failure. */
  existing?: boolean;
  /** Only these tables of the dump (mysql; a table-level restore). Each replaces its namesake. */
  tables?: string[];
  /** postgres: drop each object of the dump before recreating it (`--clean --if-exists`). */
  clean?: boolean;
}

export interface RestoreProcess {
  /** Where the dump goes. Closing it before its end (e.g. a failed pipeline destroying it) aborts the restore. */
  stdin: Writable;
  /** Resolves when the tool restored everything; rejects with the tool's message. A database it created is dropped again on failure. */
  done: Promise<void>;
  /** Notes on what could not be kept as in the source (e.g. a missing locale). */
  warnings: string[];
  kill(): void;
}

export interface TableChecksum {
  rows: number;
  checksum: string;
}

export interface EngineDriver {
  engine: DriverEngine;
  /** ServerInfo of the spec: version, host, systemID, major, settings (a few useful ones), sizeBytes. */
  serverInfo(access: DatabaseAccess): Promise<ServerInfo>;
  /** Expands ['*'] (all non-template/non-system databases) and checks named ones exist (the error names the missing ones). */
  listDatabases(access: DatabaseAccess, wanted: string[]): Promise<string[]>;
  /** The replication position right before the dump (postgres: current WAL LSN and timeline; mysql: binlog file/pos and GTID set, empty when binlog is off). */
  position(access: DatabaseAccess): Promise<Position>;
  /** Spawns the dump tool for one database; stdout is the dump stream. */
  dump(access: DatabaseAccess, database: string, options: DumpOptions): DumpProcess;
  /** Inventory (spec 2.1, no row data) of these databases. */
  inventory(access: DatabaseAccess, databases: string[], options?: InventoryOptions): Promise<Inventory>;
  /** Creates `database` (fails with a clear error if it exists) and spawns the restore tool reading the dump from stdin. */
  restore(access: DatabaseAccess, database: string, options?: RestoreOptions): RestoreProcess;
  /** Drops the database if it exists (refuses the system databases). */
  dropDatabase(access: DatabaseAccess, database: string): Promise<void>;
  /** Row count and an order-independent checksum of every table's full contents, keyed `schema.table` (postgres) or `table` (mysql). */
  tableChecksums(access: DatabaseAccess, database: string): Promise<Record<string, TableChecksum>>;
  /** Versions of the tools the driver runs, for the manifest's `tools`. */
  tools(): Promise<Record<string, string>>;
}
