/**
 * MySQL and MariaDB: the load guard's measures from `information_schema.PROCESSLIST` (connections whose current
 * database is one of the target's; PROCESS lets the backup user see every account's), `INNODB_TRX` (the oldest open
 * transaction of those connections) and `SHOW SLAVE STATUS` (`Seconds_Behind_Master`; nothing on a primary).
 */
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import type mysql from 'mysql2/promise';
import type { LoadMeasures } from '../load.ts';
import { num, rows, str, withConnection } from './shared.ts';

// Server threads (replication, the event scheduler, binlog dump threads of replicas) are not clients.
const NOT_CLIENTS = `('Daemon', 'Binlog Dump', 'Binlog Dump GTID', 'Slave_IO', 'Slave_SQL', 'Slave_worker')`;

export async function measureMysqlLoad(access: DatabaseAccess, databases: string[]): Promise<LoadMeasures> {
  return withConnection(access, undefined, async (c) => {
    const marks = databases.map(() => '?').join(', ');
    const sessions = (await rows(c, `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
       WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ${NOT_CLIENTS} AND USER <> 'system user' AND DB IN (${marks})`, databases))[0];
    const longest = (await rows(c, `SELECT COALESCE(MAX(TIMESTAMPDIFF(SECOND, t.trx_started, NOW())), 0) AS s
       FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
       WHERE p.ID <> CONNECTION_ID() AND p.DB IN (${marks})`, databases))[0];
    const notes: string[] = [];
    const lag = await replicaLag(c, notes);
    return { activeConnections: num(sessions?.n), longestTransactionSeconds: num(longest?.s), ...(lag !== undefined ? { replicationLagSeconds: lag } : {}), notes };
  });
}

/** 0 on a server that replicates from nobody; undefined (with a note) when a replica's SQL thread is stopped or the status is not readable. */
async function replicaLag(c: mysql.Connection, notes: string[]): Promise<number | undefined> {
  let status;
  try {
    status = await rows(c, 'SHOW SLAVE STATUS');
  } catch (error) {
    notes.push(`replication lag not measured: ${(error as Error).message}`);
    return undefined;
  }
  if (status.length === 0) return 0;
  const behind = status.map((s) => s.Seconds_Behind_Master);
  if (behind.some((b) => b === null || b === undefined || str(b) === '')) {
    notes.push('replication lag not measured: the replica is not replaying (Seconds_Behind_Master is NULL)');
    return undefined;
  }
  return Math.max(...behind.map(num));
}
