/**
 * PostgreSQL: `pg_dump --format=custom` per database, restored with `pg_restore` from stdin into a database created
 * beforehand with the source's encoding and locale (read from the archive's own DATABASE entry); server info,
 * positions, inventories and checksums from the catalog via `pg`.
 */
import type { EngineDriver } from '../types.ts';
import { inventory, tableChecksums } from './inventory.ts';
import { dropDatabase, restore } from './restore.ts';
import { listDatabases, position, serverInfo } from './server.ts';
import { dump, tools } from './tools.ts';

export { quoteIdent } from './shared.ts';
export { pgDumpArgs, tablePattern } from './tools.ts';
export { parseArchiveDatabase, type ArchiveDatabase } from './restore.ts';

export const postgresDriver: EngineDriver = {
  engine: 'postgres',
  serverInfo,
  listDatabases,
  position,
  dump,
  inventory,
  restore,
  dropDatabase,
  tableChecksums,
  tools,
};
