import { createHash } from 'node:crypto';
import { AppError, isAppError } from '../errors.ts';
import type { SqlClient } from '../db/sql.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
const RETENTION = '24 hours';
/** How long a running request holds its key before a retry may take over (the first one crashed). */
const LEASE = '5 minutes';

export interface StoredReply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface IdempotentRequest {
  scope: string;
  key: string;
  method: string;
  path: string;
  query: string;
  rawBody: Buffer | undefined;
}

interface KeyRow {
  request_hash: string;
  state: 'running' | 'done';
  lease_expired: boolean;
  expired: boolean;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: unknown;
}

export function requestFingerprint(request: Pick<IdempotentRequest, 'method' | 'path' | 'query' | 'rawBody'>): string {
  const params = new URLSearchParams(request.query);
  params.sort();
  return createHash('sha256')
    .update(JSON.stringify([request.method.toUpperCase(), request.path, params.toString()]))
    .update('\n')
    .update(request.rawBody ?? Buffer.alloc(0))
    .digest('hex');
}

/**
 * Runs `execute` at most once per (scope, key) within 24 hours (spec part 8).
 * The claim is an INSERT on the primary key, so concurrent first requests cannot both run.
 */
export async function runIdempotent(
  db: SqlClient,
  request: IdempotentRequest,
  execute: () => Promise<StoredReply>,
): Promise<StoredReply & { replayed: boolean }> {
  const hash = requestFingerprint(request);
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await claim(db, request, hash)) return { ...(await executeAndStore(db, request, execute)), replayed: false };

    const row = await readKey(db, request);
    if (!row) continue;
    if (row.expired) {
      await db.$executeRawUnsafe(`DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND expires_at <= now()`, request.scope, request.key);
      continue;
    }
    if (row.request_hash !== hash) {
      throw new AppError('idempotency-key-reused', 'This Idempotency-Key was already used with a different request.', {
        errors: [{ pointer: '/header/idempotency-key', detail: 'Use a new key for a different request.' }],
      });
    }
    if (row.state === 'done') {
      return { status: row.response_status ?? 200, headers: row.response_headers ?? {}, body: row.response_body, replayed: true };
    }
    if (row.lease_expired && (await takeOver(db, request))) {
      return { ...(await executeAndStore(db, request, execute)), replayed: false };
    }
    throw new AppError('idempotency-in-progress', 'A request with this Idempotency-Key is still being processed; retry later.', {
      headers: { 'retry-after': '1' },
    });
  }
  throw new AppError('idempotency-in-progress', 'A request with this Idempotency-Key is still being processed; retry later.');
}

async function claim(db: SqlClient, request: IdempotentRequest, hash: string): Promise<boolean> {
  const inserted = await db.$executeRawUnsafe(
    `INSERT INTO idempotency_keys (scope, key, request_hash, state, locked_until, expires_at)
     VALUES ($1, $2, $3, 'running', now() + interval '${LEASE}', now() + interval '${RETENTION}')
     ON CONFLICT (scope, key) DO NOTHING`,
    request.scope,
    request.key,
    hash,
  );
  return inserted === 1;
}

async function takeOver(db: SqlClient, request: IdempotentRequest): Promise<boolean> {
  const updated = await db.$executeRawUnsafe(
    `UPDATE idempotency_keys SET locked_until = now() + interval '${LEASE}'
     WHERE scope = $1 AND key = $2 AND state = 'running' AND locked_until <= now()`,
    request.scope,
    request.key,
  );
  return updated === 1;
}

async function readKey(db: SqlClient, request: IdempotentRequest): Promise<KeyRow | undefined> {
  const rows = await db.$queryRawUnsafe<KeyRow[]>(
    `SELECT request_hash, state, locked_until <= now() AS lease_expired, expires_at <= now() AS expired,
            response_status, response_headers, response_body
     FROM idempotency_keys WHERE scope = $1 AND key = $2`,
    request.scope,
    request.key,
  );
  return rows[0];
}

async function executeAndStore(db: SqlClient, request: IdempotentRequest, execute: () => Promise<StoredReply>): Promise<StoredReply> {
  let reply: StoredReply;
  try {
    reply = await execute();
  } catch (error) {
    if (isAppError(error) && error.status < 500) {
      await store(db, request, { status: error.status, headers: {}, body: { error: serializeAppError(error) } });
    } else {
      await release(db, request);
    }
    throw error;
  }
  if (reply.status >= 500) await release(db, request);
  else await store(db, request, reply);
  return reply;
}

async function store(db: SqlClient, request: IdempotentRequest, reply: StoredReply): Promise<void> {
  await db.$executeRawUnsafe(
    `UPDATE idempotency_keys SET state = 'done', locked_until = NULL, response_status = $3,
            response_headers = $4::jsonb, response_body = $5::jsonb
     WHERE scope = $1 AND key = $2`,
    request.scope,
    request.key,
    reply.status,
    JSON.stringify(reply.headers),
    JSON.stringify(reply.body ?? null),
  );
}

async function release(db: SqlClient, request: IdempotentRequest): Promise<void> {
  await db.$executeRawUnsafe(`DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2`, request.scope, request.key);
}

/** A stored 4xx is replayed as the same AppError, rendered again with the retry's request id. */
export interface SerializedAppError {
  code: AppError['code'];
  detail: string;
  errors?: AppError['errors'];
  extensions: Record<string, unknown>;
  headers: Record<string, string>;
}

function serializeAppError(error: AppError): SerializedAppError {
  return { code: error.code, detail: error.message, errors: error.errors, extensions: error.extensions, headers: error.headers };
}

export function storedError(body: unknown): AppError | undefined {
  if (!body || typeof body !== 'object' || !('error' in body)) return undefined;
  const e = (body as { error: SerializedAppError }).error;
  return new AppError(e.code, e.detail, { errors: e.errors, extensions: e.extensions, headers: e.headers });
}

export async function purgeExpiredIdempotencyKeys(db: SqlClient): Promise<number> {
  return db.$executeRawUnsafe(`DELETE FROM idempotency_keys WHERE expires_at <= now()`);
}
