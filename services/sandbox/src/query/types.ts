/** Sandbox queries: the shapes callers see, the refusal error and the bounds of a request. */

import type { components } from '@sigil/proto/api/strata';

export interface SandboxConnection {
  engine: 'postgres' | 'mysql';
  host: string;
  port: number;
  username: string;
  password: string;
  database: string;
}

export interface QueryInput {
  sql: string;
  write?: boolean;
  limit?: number;
  /** Column-name regular expressions, matched case-insensitively and unanchored. */
  masks: string[];
  timeoutMs?: number;
}

type ApiQueryResult = components['schemas']['QueryResult'];

/** The API's QueryResult (proto/), with the `[row, column]` pairs the engine guarantees. */
export interface QueryResult extends ApiQueryResult {
  /** `[rowIndex, columnIndex]` of each SQL NULL (shown as '' in `rows`). */
  nulls?: Array<[number, number]>;
}

/** The API's TableInfo (proto/), every member present. */
export type TableInfo = Required<components['schemas']['TableInfo']>;

/** A request the sandbox will not run, or the database's own error about it; the API answers 400 with the message. */
export class QueryRefused extends Error {
  override name = 'QueryRefused';
}

/** Runs a step of the user's statement: what the database reports about it is the user's to read, as QueryRefused. */
export async function refuseOnDatabaseError<T>(step: () => Promise<T>, isDatabaseError: (error: unknown) => boolean): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (isDatabaseError(error)) throw new QueryRefused((error as Error).message);
    throw error;
  }
}

export const MAX_SQL_LENGTH = 262_144;
export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 100;
export const DEFAULT_TIMEOUT_MS = 30_000;
// Postgres takes statement_timeout as a 32-bit count of milliseconds.
export const MAX_TIMEOUT_MS = 2_147_483_647;
export const BROWSE_ROWS = 50;

/** A request with its defaults applied, checked against the bounds. */
export interface QueryRequest {
  sql: string;
  write: boolean;
  limit: number;
  masks: RegExp[];
  timeoutMs: number;
}

/** What an engine hands back before masking: every cell as the server printed it, null for SQL NULL. */
export interface RawResult {
  columns: string[];
  rows: Array<Array<string | null>>;
  truncated: boolean;
  command?: string;
  affected?: number;
  /** Indexes of the result columns to show masked. */
  maskedColumns: Set<number>;
}
