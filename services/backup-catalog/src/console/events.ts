import type { Bus } from '@sigil/kit/bus';
import { strataConsoleSubject, type StrataConsoleEvent } from '@sigil/proto/strata-jobs';

/** The console's Event object (spec 2.1); other services (the sandbox service) send it too (proto/src/strata-jobs.ts). */
export type ConsoleEvent = StrataConsoleEvent;

export type EventListener = (events: ConsoleEvent[]) => void;

/** Updates are coalesced: listeners get the latest event per object at most once per interval (spec part 6: 500 ms). */
export const COALESCE_INTERVAL_MS = 500;

export interface EventHub {
  publish(event: ConsoleEvent): void;
  subscribe(listener: EventListener): () => void;
  stop(): void;
}

const TERMINAL = new Set(['Succeeded', 'Failed']);
const REMEMBERED_TERMINAL = 10_000;

export function createEventHub(intervalMs = COALESCE_INTERVAL_MS): EventHub {
  const pending = new Map<string, ConsoleEvent>();
  // Progress travels apart from results and may arrive late: never let it hide or undo a final phase.
  const finished = new Set<string>();
  const listeners = new Set<EventListener>();
  const timer = setInterval(() => {
    if (pending.size === 0) return;
    const batch = [...pending.values()];
    pending.clear();
    for (const listener of listeners) listener(batch);
  }, intervalMs);
  timer.unref();
  return {
    publish(event) {
      const key = `${event.kind}/${event.namespace}/${event.name}`;
      if (TERMINAL.has(event.phase)) {
        finished.add(key);
        if (finished.size > REMEMBERED_TERMINAL) finished.delete(finished.values().next().value as string);
      } else if (finished.has(key) && (event.kind === 'backup' || event.kind === 'restore')) {
        return;
      }
      pending.delete(key); // keep arrival order of the latest updates
      pending.set(key, event);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop() {
      clearInterval(timer);
      listeners.clear();
    },
  };
}

/** Console events cross replicas on plain NATS: every replica's hub hears every replica's changes. */
export const CONSOLE_SUBJECT = strataConsoleSubject();

export interface EventFeed {
  notify(event: ConsoleEvent): void;
  stop(): Promise<void>;
}

export async function connectEventFeed(bus: Pick<Bus, 'listen' | 'notify'>, hub: EventHub, subject = CONSOLE_SUBJECT): Promise<EventFeed> {
  // The feed is best effort, the catalog holds the truth: a malformed event is dropped.
  const sub = await bus.listen(subject, (payload) => {
    if (payload && typeof payload === 'object') hub.publish(payload as ConsoleEvent);
  });
  return {
    notify(event) {
      bus.notify(subject, event);
    },
    async stop() {
      sub.unsubscribe();
    },
  };
}
