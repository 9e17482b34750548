import { AppError } from '@sigil/kit/errors';
import { unseal } from '@sigil/kit/crypto';
import type { components } from '@sigil/proto/api/strata';
import type { SandboxRow } from './db.ts';
import { browseTable, listTables, QueryRefused, runQuery, type QueryResult, type SandboxConnection } from './query/index.ts';
import { PHASES, passwordContext, type SandboxService } from './sandboxes.ts';

/** Query, tables and browse on a Ready sandbox, with the target's masks; a refused query is the caller's 400. */
export function createSandboxQueries(deps: { sandboxes: SandboxService; secretsKey: Buffer; timeoutMs: number }) {
  async function connection(name: string, database: string | undefined): Promise<{ row: SandboxRow; conn: SandboxConnection }> {
    const row = await deps.sandboxes.find(name);
    if (row.phase !== PHASES.ready || !row.port) throw new AppError('conflict', `Sandbox ${name} is ${row.phase}; it answers queries once it is Ready.`);
    if (database !== undefined && !row.databases.includes(database)) {
      throw new AppError('validation-failed', `database: sandbox ${name} holds ${row.databases.join(', ') || 'no database'}, not ${database}`);
    }
    const conn: SandboxConnection = {
      engine: row.engine as SandboxConnection['engine'],
      host: row.host,
      port: row.port,
      username: row.username,
      password: unseal(deps.secretsKey, row.sealedPassword, passwordContext(row)),
      database: database ?? row.database,
    };
    return { row, conn };
  }

  async function refusedAs400<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof QueryRefused) throw new AppError('validation-failed', error.message);
      throw error;
    }
  }

  return {
    async query(name: string, request: components['schemas']['QueryRequest']): Promise<QueryResult> {
      const { row, conn } = await connection(name, request.database);
      return await refusedAs400(() => runQuery(conn, { sql: request.sql, write: request.write === true, limit: request.limit ?? 100, masks: row.masks, timeoutMs: deps.timeoutMs }));
    },
    async tables(name: string, database: string | undefined) {
      const { conn } = await connection(name, database);
      return { tables: await listTables(conn) };
    },
    async browse(name: string, table: string, database: string | undefined): Promise<QueryResult> {
      const { row, conn } = await connection(name, database);
      return await refusedAs400(() => browseTable(conn, table, row.masks));
    },
  };
}
