/** PostgreSQL: Connections to a PostgreSQL server (`pg`), quoting and the helpers every part of the driver uses. */

import pg from 'pg';
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';

export const APPLICATION_NAME = 'strata-mover';
export const SYSTEM_DATABASES = new Set(['postgres', 'template0', 'template1']);
/** Databases hosting providers keep for themselves; `*` leaves them out (the maintenance database `postgres` stays in). */
export const PROVIDER_DATABASES = new Set(['rdsadmin', 'azure_maintenance', 'azure_sys', 'cloudsqladmin', 'alloydbadmin', 'alloydbmetadata']);
export const USER_SCHEMAS = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_(toast|temp_|toast_temp_)'`;

export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
export const quoteLiteral = (value: string): string => `'${value.replaceAll("'", "''")}'`;
export const where = (access: DatabaseAccess): string => `${access.host}:${access.port}`;

export function pgError(access: DatabaseAccess, database: string | undefined, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`postgres ${where(access)}${database ? ` database "${database}"` : ''}: ${message}`, { cause: error });
}

export async function open(access: DatabaseAccess, database: string): Promise<pg.Client> {
  const client = new pg.Client({
    host: access.host,
    port: access.port,
    user: access.username,
    password: access.password,
    database,
    connectionTimeoutMillis: 15_000,
    application_name: APPLICATION_NAME,
  });
  client.on('error', () => {}); // a server going away surfaces on the next query
  try {
    await client.connect();
    return client;
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
}

/** Runs fn on a connection to `database`, or to a maintenance database (postgres, else template1) when undefined. */
export async function withClient<T>(access: DatabaseAccess, database: string | undefined, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  let client: pg.Client;
  try {
    if (database !== undefined) client = await open(access, database);
    else {
      try {
        client = await open(access, 'postgres');
      } catch (error) {
        if ((error as { code?: string }).code !== '3D000') throw error;
        client = await open(access, 'template1');
      }
    }
  } catch (error) {
    throw pgError(access, database, error);
  }
  try {
    return await fn(client);
  } catch (error) {
    throw pgError(access, database, error);
  } finally {
    await client.end().catch(() => {});
  }
}

export const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));
