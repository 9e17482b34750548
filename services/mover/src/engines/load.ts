/**
 * The source's load as the load guard (policy `loadGuard`) reads it before a backup starts: what a backup competes
 * with. Connections and transactions are counted in the databases the backup reads, not server-wide: another
 * application's database on a shared server says nothing about this target's load, and a backup that waits for a
 * stranger's long report would wait for the wrong reason. Replication lag is the server's own.
 */
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { measurePostgresLoad } from './postgres/load.ts';
import { measureMysqlLoad } from './mysql/load.ts';

export interface LoadMeasures {
  /** Client connections open to the databases, whatever their state (an idle pooled connection can start work any moment); the mover's own left out. */
  activeConnections: number;
  /** Seconds the oldest transaction open in the databases has been running (0 without one). */
  longestTransactionSeconds: number;
  /** Seconds a replica's replay is behind (0 on a primary); undefined when the server cannot tell (with why in `notes`). */
  replicationLagSeconds?: number;
  /** What could not be measured, and why. */
  notes: string[];
}

export async function measureLoad(access: DatabaseAccess, databases: string[]): Promise<LoadMeasures> {
  if (access.engine === 'postgres') return measurePostgresLoad(access, databases);
  if (access.engine === 'mysql') return measureMysqlLoad(access, databases);
  throw new Error(`the load guard cannot measure a ${access.engine} server`);
}
