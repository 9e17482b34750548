import pg from 'pg';
import mysql from 'mysql2/promise';
import type { StoreAccess } from '@sigil/proto/strata-jobs';
import { createS3Client } from '@strata/stream';
import { REASONS } from './conditions.ts';

/** The outcome of reaching a bucket or a database server with the stored credentials. */
export type ProbeResult = { ok: true } | { ok: false; reason: string; message: string };

/** Long enough for a real server across a network, short enough that an apply waiting on it stays quick. */
export const PROBE_TIMEOUT_MS = 3000;

export interface DatabaseProbe {
  engine: 'postgres' | 'mysql';
  host: string;
  port: number;
  username: string;
  password: string;
  /** The target's databases; `*` means all, and then only the server is checked. */
  databases: string[];
}

class ProbeTimeout extends Error {}

/** Settles with the promise, or rejects with ProbeTimeout after `ms` (the abandoned attempt ends on its own timeout). */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Node's connection errors carry no message when every address failed (AggregateError); say what they were. */
function describe(error: unknown): string {
  if (error instanceof AggregateError && !error.message) return error.errors.map(describe).join('; ');
  if (error instanceof Error) return error.message || String((error as { code?: unknown }).code ?? error.name);
  return String(error);
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

const S3_AUTH_CODES = new Set(['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidToken', 'ExpiredToken', 'AuthorizationHeaderMalformed']);

/** HeadBucket with the store's credentials: Ready, or BucketMissing, AuthFailed, BucketUnreachable, InvalidEndpoint. */
export async function probeBucket(access: StoreAccess, readOnly: boolean, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  let client: ReturnType<typeof createS3Client>;
  try {
    client = createS3Client(access);
  } catch (error) {
    return { ok: false, reason: REASONS.invalidEndpoint, message: describe(error) };
  }
  const where = `bucket ${access.bucket} at ${access.endpoint}`;
  try {
    if (await within(timeoutMs, client.bucketExists(access.bucket))) return { ok: true };
    return { ok: false, reason: REASONS.bucketMissing, message: `${where} does not exist${readOnly ? ' (a read-only store never creates it)' : ' and could not be created'}` };
  } catch (error) {
    if (S3_AUTH_CODES.has(codeOf(error))) return { ok: false, reason: REASONS.authFailed, message: `${where}: access denied with the stored credentials (${codeOf(error)})` };
    return { ok: false, reason: REASONS.bucketUnreachable, message: `${where}: ${describe(error)}` };
  }
}

/** Connects as the target's user and checks its databases exist: Ready, or AuthFailed, DatabaseNotFound, Unreachable. */
export async function probeDatabase(probe: DatabaseProbe, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  const named = probe.databases.filter((d) => d !== '*');
  const where = `${probe.engine} ${probe.host}:${probe.port}`;
  try {
    const missing = await within(timeoutMs, probe.engine === 'postgres' ? missingPostgresDatabases(probe, named, timeoutMs) : missingMysqlDatabases(probe, named, timeoutMs));
    if (missing.length) return { ok: false, reason: REASONS.databaseNotFound, message: `${where}: database ${missing.join(', ')} does not exist` };
    return { ok: true };
  } catch (error) {
    const reason = probe.engine === 'postgres' ? postgresReason(error) : mysqlReason(error);
    return { ok: false, reason, message: `${where}: ${describe(error)}` };
  }
}

async function missingPostgresDatabases(probe: DatabaseProbe, named: string[], timeoutMs: number): Promise<string[]> {
  const client = new pg.Client({
    host: probe.host,
    port: probe.port,
    user: probe.username,
    password: probe.password,
    database: named[0] ?? 'postgres',
    connectionTimeoutMillis: timeoutMs,
    application_name: 'strata-catalog',
  });
  client.on('error', () => {});
  try {
    await client.connect();
    if (named.length === 0) return [];
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname = ANY($1)', [named]);
    return named.filter((d) => !rows.some((r) => r.datname === d));
  } finally {
    await client.end().catch(() => {});
  }
}

async function missingMysqlDatabases(probe: DatabaseProbe, named: string[], timeoutMs: number): Promise<string[]> {
  const connection = await mysql.createConnection({
    host: probe.host,
    port: probe.port,
    user: probe.username,
    password: probe.password,
    ...(named[0] ? { database: named[0] } : {}),
    connectTimeout: timeoutMs,
  });
  connection.on('error', () => {});
  try {
    if (named.length === 0) return [];
    const [rows] = await connection.query<Array<mysql.RowDataPacket & { name: string }>>('SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name IN (?)', [named]);
    return named.filter((d) => !rows.some((r) => r.name === d));
  } finally {
    await connection.end().catch(() => {});
  }
}

/** SQLSTATE class 28 is "invalid authorization"; 3D000 an unknown database. */
function postgresReason(error: unknown): string {
  const code = codeOf(error);
  if (code.startsWith('28')) return REASONS.authFailed;
  if (code === '3D000') return REASONS.databaseNotFound;
  // pg refuses before asking the server when a password is needed and none is stored.
  if (!code && /password/i.test(describe(error))) return REASONS.authFailed;
  return REASONS.unreachable;
}

const MYSQL_AUTH_CODES = new Set(['ER_ACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR', 'ER_HOST_NOT_PRIVILEGED', 'ER_NOT_SUPPORTED_AUTH_MODE']);

function mysqlReason(error: unknown): string {
  const code = codeOf(error);
  if (MYSQL_AUTH_CODES.has(code)) return REASONS.authFailed;
  if (code === 'ER_BAD_DB_ERROR') return REASONS.databaseNotFound;
  return REASONS.unreachable;
}
