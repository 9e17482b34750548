/**
 * PostgreSQL: the load guard's measures from `pg_stat_activity` (connections and transactions of the target's
 * databases; other roles' sessions are visible to `pg_monitor`, which a backup user holds per the spec) and the
 * replay position of a standby (`pg_last_xact_replay_timestamp`).
 */
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import type { LoadMeasures } from '../load.ts';
import { num, withClient } from './shared.ts';

const SESSIONS = `
  SELECT count(*) AS connections,
         COALESCE(max(extract(epoch FROM clock_timestamp() - xact_start)), 0) AS longest
    FROM pg_stat_activity
   WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND datname = ANY($1::text[])`;

// On an idle primary-standby pair the last replayed commit grows old without any lag: a standby that has replayed
// everything it received is not behind.
const LAG = `
  SELECT CASE WHEN NOT pg_is_in_recovery() THEN 0
              WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
              ELSE COALESCE(extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 0) END AS lag`;

export async function measurePostgresLoad(access: DatabaseAccess, databases: string[]): Promise<LoadMeasures> {
  return withClient(access, databases[0], async (client) => {
    const sessions = (await client.query<{ connections: string; longest: string }>(SESSIONS, [databases])).rows[0];
    const lag = (await client.query<{ lag: string }>(LAG)).rows[0];
    return {
      activeConnections: num(sessions?.connections),
      longestTransactionSeconds: Math.floor(num(sessions?.longest)),
      replicationLagSeconds: Math.floor(num(lag?.lag)),
      notes: [],
    };
  });
}
