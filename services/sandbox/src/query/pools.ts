/**
 * Server sessions kept between requests, one pool per sandbox server, database and user. Opening a session costs the
 * server a process (Postgres) and both sides an authentication: tens of milliseconds on a busy machine, more than the
 * query itself. A session goes back to its pool only after its request ended cleanly and the engine reset it (Postgres
 * `DISCARD ALL`, MySQL `COM_CHANGE_USER`): nothing a statement set, created or locked outlives the request.
 */
import { createHash } from 'node:crypto';
import type { SandboxConnection } from './types.ts';

/** A pool nobody used for this long is closed when the next request comes (its sandbox is likely gone). */
const POOL_IDLE_MS = 5 * 60_000;
/** Sessions per pool: queries of one sandbox beyond this wait for one to come back. */
export const SESSIONS_PER_SANDBOX = 4;
/** An idle session is closed after this long. */
export const SESSION_IDLE_MS = 30_000;

const registries = new Set<PoolRegistry<unknown>>();

export class PoolRegistry<P> {
  private readonly pools = new Map<string, { pool: P; usedAt: number }>();
  private readonly create: (conn: SandboxConnection) => P;
  private readonly close: (pool: P) => Promise<void>;

  constructor(create: (conn: SandboxConnection) => P, close: (pool: P) => Promise<void>) {
    this.create = create;
    this.close = close;
    registries.add(this as PoolRegistry<unknown>);
  }

  for(conn: SandboxConnection): P {
    const now = Date.now();
    for (const [key, entry] of this.pools) {
      if (now - entry.usedAt < POOL_IDLE_MS) continue;
      this.pools.delete(key);
      void this.close(entry.pool).catch(() => undefined);
    }
    const key = keyOf(conn);
    const entry = this.pools.get(key) ?? { pool: this.create(conn), usedAt: now };
    entry.usedAt = now;
    this.pools.set(key, entry);
    return entry.pool;
  }

  async closeAll(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((entry) => this.close(entry.pool).catch(() => undefined)));
  }
}

/** Closes every pooled session (service shutdown, tests). */
export async function closeQueryPools(): Promise<void> {
  await Promise.all([...registries].map((registry) => registry.closeAll()));
}

// The password is part of the key (hashed: keys are not secrets): a sandbox recreated with other credentials gets new sessions.
const keyOf = (conn: SandboxConnection): string =>
  [conn.engine, conn.host, conn.port, conn.database, conn.username, createHash('sha256').update(conn.password).digest('hex')].join('\0');
