import pg from 'pg';
import mysql from 'mysql2/promise';
import type { SandboxConnection } from './query/index.ts';

/** Runs the target's `postRestoreSQL` in the sandbox's default database, in order, each statement on its own. */
export async function runStatements(access: SandboxConnection, statements: string[]): Promise<void> {
  if (access.engine === 'postgres') {
    const client = new pg.Client({ host: access.host, port: access.port, user: access.username, password: access.password, database: access.database });
    client.on('error', () => {});
    await client.connect();
    try {
      for (const sql of statements) await client.query(sql);
    } finally {
      await client.end().catch(() => {});
    }
    return;
  }
  const connection = await mysql.createConnection({ host: access.host, port: access.port, user: access.username, password: access.password, database: access.database });
  try {
    for (const sql of statements) await connection.query(sql);
  } finally {
    await connection.end().catch(() => {});
  }
}
