import { randomBytes } from 'node:crypto';
import type { DatabaseAccess, RestoreJob } from '@sigil/proto/strata-jobs';
import { postgresDriver } from '../engines/postgres/index.ts';
import { withClient } from '../engines/postgres/shared.ts';
import { runTogether } from '../engines/together.ts';
import { danglingKeysNote, dropDanglingKeys } from './dangling-keys.ts';

/** Where a restore puts what it restores: new databases, or in place; whole databases, or some tables. */
export interface Placement {
  inPlace: boolean;
  /** A sandbox's new server: a database initdb already made there (`postgres`) is restored into, not refused. */
  freshServer: boolean;
  /** Only these tables (`table` or `schema.table`); absent: whole databases. */
  tables?: string[];
}

export function placementOf(job: RestoreJob): Placement {
  return { inPlace: job.mode === 'in-place', freshServer: job.keepNames === true && job.mode === 'new', ...(job.tables?.length ? { tables: job.tables } : {}) };
}

/**
 * Copies a Postgres database, or some of its tables with their indexes, constraints and triggers (`pg_dump --table`),
 * into `toDb`. In place, a whole database replaces the old one (dropped first); tables replace their namesakes in one
 * transaction (`--clean --single-transaction`), so a table another one's foreign key needs changes nothing. Tables
 * into a new database leave out their foreign keys to tables not restored (dangling-keys.ts). Answers what the
 * restore's message should add ('' for nothing). `from` must be the restore's own copy: it may be changed.
 */
export async function copyPostgres(from: DatabaseAccess, fromDb: string, to: DatabaseAccess, toDb: string, placement: Placement): Promise<string> {
  const tables = placement.tables;
  if (placement.inPlace && !tables) await postgresDriver.dropDatabase(to, toDb);
  const leftOut = tables && !placement.inPlace ? await dropDanglingKeys(from, fromDb, tables) : [];
  const dump = postgresDriver.dump(from, fromDb, { excludeData: [], excludeTables: [], ...(tables ? { includeTables: tables } : {}) });
  const existing = (placement.inPlace && tables !== undefined) || (placement.freshServer && (await postgresDatabaseExists(to, toDb)));
  const restore = postgresDriver.restore(to, toDb, existing ? { existing: true, clean: placement.inPlace } : {});
  dump.stdout.pipe(restore.stdin);
  await runTogether(dump.done, restore.done, () => {
    dump.kill();
    restore.kill();
  });
  return danglingKeysNote(leftOut);
}

/** A scratch database's name next to `database`: a table-level restore of a dump goes through one. */
export function scratchName(database: string): string {
  return `${database.slice(0, 40)}_strata_${randomBytes(3).toString('hex')}`;
}

export async function postgresDatabaseExists(access: DatabaseAccess, database: string): Promise<boolean> {
  return await withClient(access, undefined, async (client) => (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount === 1);
}
