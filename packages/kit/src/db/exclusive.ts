import type { Logger } from '../log.ts';

export type ExclusiveOutcome<T> = { ran: true; value: T } | { ran: false };

export interface ExclusiveWork {
  /**
   * Runs `work` unless another process holds `name`: the pass of a scheduler or reaper that one replica at a time
   * does. Answers `{ ran: false }` at once when another replica is doing it (or the database cannot be reached).
   */
  tryExclusive<T>(name: string, work: () => Promise<T>): Promise<ExclusiveOutcome<T>>;
  close(): Promise<void>;
}

/**
 * Session advisory locks on a connection of their own (not the pool's: a pass may take minutes and use the pool
 * meanwhile). Postgres releases a session's locks when its connection ends, so a replica killed in the middle of a pass
 * frees the work for the others at once; there is no timeout after which a slow holder loses its lock to a second one.
 * Lost connection (the database restarted): its locks are gone, the next pass connects again.
 */
export async function createExclusiveWork(databaseUrl: string, log: Logger): Promise<ExclusiveWork> {
  const { default: pg } = await import('pg');
  let client: Promise<InstanceType<typeof pg.Client>> | undefined;
  let current: InstanceType<typeof pg.Client> | undefined;
  let closed = false;
  const held = new Set<string>();

  const connection = () =>
    (client ??= (async () => {
      const next = new pg.Client({ connectionString: databaseUrl });
      next.on('error', (error) => log.warn({ err: error }, 'advisory lock connection lost; passes held on it may run again elsewhere'));
      next.on('end', () => {
        if (current === next) client = undefined;
      });
      await next.connect();
      current = next;
      return next;
    })().catch((error: unknown) => {
      client = undefined;
      throw error;
    }));

  return {
    async tryExclusive(name, work) {
      // In this process too, one at a time: a session lock is re-entrant for its own session.
      if (closed || held.has(name)) return { ran: false };
      held.add(name);
      let locked: InstanceType<typeof pg.Client>;
      try {
        locked = await connection();
        const { rows } = await locked.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [name]);
        if (!rows[0]?.ok) {
          held.delete(name);
          return { ran: false };
        }
      } catch (error) {
        held.delete(name);
        log.warn({ err: error, lock: name }, 'advisory lock not taken: the database could not be reached');
        return { ran: false };
      }
      try {
        return { ran: true, value: await work() };
      } finally {
        held.delete(name);
        await locked.query('SELECT pg_advisory_unlock(hashtext($1))', [name]).catch(() => undefined);
      }
    },
    async close() {
      closed = true;
      const current = await client?.catch(() => undefined);
      client = undefined;
      await current?.end().catch(() => undefined);
    },
  };
}
