import { listenToChannel } from '@sigil/kit/db';
import type { Logger } from '@sigil/kit/log';
import { APPENDED_CHANNEL } from './audit.ts';

export interface AppendListener {
  /** Calls `handler` whenever an entry of the envelope was committed, by any replica. */
  subscribe(envelopeId: string, handler: () => void): () => void;
  stop(): Promise<void>;
}

/** LISTENs to the appended-entry notifications of the database (payload: the envelope id). */
export async function startAppendListener(databaseUrl: string, log: Logger): Promise<AppendListener> {
  const handlers = new Map<string, Set<() => void>>();
  const listener = await listenToChannel(
    databaseUrl,
    APPENDED_CHANNEL,
    (envelopeId) => {
      for (const handler of handlers.get(envelopeId) ?? []) handler();
    },
    log,
  );
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
    stop: () => listener.stop(),
  };
}
