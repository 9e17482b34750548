import type { Logger } from '@sigil/kit/log';
import { APPENDED_CHANNEL } from './audit.ts';

export interface AppendListener {
  /** Calls `handler` whenever an entry of the envelope was committed, by any replica. */
  subscribe(envelopeId: string, handler: () => void): () => void;
  stop(): Promise<void>;
}

/** LISTENs to the appended-entry notifications of the database (on their own connection, re-made after a loss). */
export async function startAppendListener(databaseUrl: string, log: Logger): Promise<AppendListener> {
  const { default: pg } = await import('pg');
  const handlers = new Map<string, Set<() => void>>();
  let client: InstanceType<typeof pg.Client> | undefined;
  let stopped = false;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on('notification', (message) => {
      for (const handler of handlers.get(message.payload ?? '') ?? []) handler();
    });
    next.on('error', (error) => {
      log.warn({ err: error }, 'audit notifications: connection lost; reconnecting');
      client = undefined;
      if (!stopped) setTimeout(() => void connect().catch(() => undefined), 1000).unref();
    });
    await next.connect();
    await next.query(`LISTEN ${APPENDED_CHANNEL}`);
    client = next;
  };
  await connect();
  return {
    subscribe(envelopeId, handler) {
      const set = handlers.get(envelopeId) ?? new Set();
      set.add(handler);
      handlers.set(envelopeId, set);
      return () => {
        set.delete(handler);
        if (set.size === 0) handlers.delete(envelopeId);
      };
    },
    async stop() {
      stopped = true;
      await client?.end().catch(() => undefined);
    },
  };
}
