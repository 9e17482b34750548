import { createHash } from 'node:crypto';
import { AppError, isAppError } from '../errors.ts';
import type { SqlClient } from '../db/sql.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
const RETENTION = '24 hours';
/**
 * How long a running request holds its key before a retry may take over: the request renews it every `renewMs`
 * while it runs, so the lease only runs out when its process died or lost its database (a retry then
 * waited five minutes under a fixed lease, longer than a client's patience: the long faults run).
 */
export const IDEMPOTENCY_LEASE = { leaseMs: 30_000, renewMs: 10_000 };
type Lease = typeof IDEMPOTENCY_LEASE;

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
  lease: Lease = IDEMPOTENCY_LEASE,
): Promise<StoredReply & { replayed: boolean }> {
  const hash = requestFingerprint(request);
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await claim(db, request, hash, lease)) return { ...(await executeAndStore(db, request, execute, lease)), replayed: false };

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
    if (row.lease_expired && (await renew(db, request, lease, { onlyExpired: true }))) {
      return { ...(await executeAndStore(db, request, execute, lease)), replayed: false };
    }
    throw new AppError('idempotency-in-progress', 'A request with this Idempotency-Key is still being processed; retry later.', {
      headers: { 'retry-after': '1' },
    });
  }
  throw new AppError('idempotency-in-progress', 'A request with this Idempotency-Key is still being processed; retry later.');
}

async function claim(db: SqlClient, request: IdempotentRequest, hash: string, lease: Lease): Promise<boolean> {
  const inserted = await db.$executeRawUnsafe(
    `INSERT INTO idempotency_keys (scope, key, request_hash, state, locked_until, expires_at)
     VALUES ($1, $2, $3, 'running', now() + make_interval(secs => $4), now() + interval '${RETENTION}')
     ON CONFLICT (scope, key) DO NOTHING`,
    request.scope,
    request.key,
    hash,
    lease.leaseMs / 1000,
  );
  return inserted === 1;
}

/** Extends a running request's lease: its own, while it runs, or (`onlyExpired`) one whose request died, to take it over. */
async function renew(db: SqlClient, request: IdempotentRequest, lease: Lease, options: { onlyExpired?: boolean } = {}): Promise<boolean> {
  const updated = await db.$executeRawUnsafe(
    `UPDATE idempotency_keys SET locked_until = now() + make_interval(secs => $3)
     WHERE scope = $1 AND key = $2 AND state = 'running'${options.onlyExpired ? ' AND locked_until <= now()' : ''}`,
    request.scope,
    request.key,
    lease.leaseMs / 1000,
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

async function executeAndStore(db: SqlClient, request: IdempotentRequest, execute: () => Promise<StoredReply>, lease: Lease): Promise<StoredReply> {
  let reply: StoredReply;
  const renewing = setInterval(() => void renew(db, request, lease).catch(() => undefined), lease.renewMs);
  renewing.unref();
  try {
    reply = await execute();
  } catch (error) {
    if (isAppError(error) && error.status < 500) {
      await store(db, request, { status: error.status, headers: {}, body: { error: serializeAppError(error) } });
    } else {
      await release(db, request);
    }
    throw error;
  } finally {
    clearInterval(renewing);
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
