import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { EVENTS_STREAM, JOBS_STREAM, STRATA_EVENTS_STREAM, STRATA_EVENTS_SUBJECTS, STRATA_JOBS_STREAM, STRATA_JOBS_SUBJECTS } from '@sigil/proto';

export interface Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  close(): Promise<void>;
}

const DAY_NS = 24 * 60 * 60 * 1e9;

/** The platform streams. Events fan out to many durable consumers; jobs are a work queue. */
export const STREAMS: Array<Partial<StreamConfig> & { name: string }> = [
  {
    name: EVENTS_STREAM,
    subjects: ['sigil.events.>'],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: 7 * DAY_NS,
    duplicate_window: 10 * 60 * 1e9,
  },
  {
    name: JOBS_STREAM,
    subjects: ['sigil.jobs.>'],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: 10 * 60 * 1e9,
  },
  // Strata: the mover's reports, and backup/restore jobs (work queue).
  {
    name: STRATA_EVENTS_STREAM,
    subjects: [STRATA_EVENTS_SUBJECTS],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: 7 * DAY_NS,
    duplicate_window: 10 * 60 * 1e9,
  },
  {
    name: STRATA_JOBS_STREAM,
    subjects: [STRATA_JOBS_SUBJECTS],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: 10 * 60 * 1e9,
  },
];

export async function connectBus(url: string, name: string): Promise<Bus> {
  const nc = await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
  const jsm = await jetstreamManager(nc);
  await ensureStreams(jsm);
  return {
    nc,
    js: jetstream(nc),
    jsm,
    close: async () => {
      if (!nc.isClosed()) await nc.drain();
    },
  };
}

export async function ensureStreams(jsm: JetStreamManager, streams = STREAMS): Promise<void> {
  for (const config of streams) {
    const { name } = config;
    try {
      await jsm.streams.info(name);
      await jsm.streams.update(name, config);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        await jsm.streams.add(config);
      } catch (addError) {
        // Another replica created it between our look-up and add.
        if (!/already in use|exists/i.test(String(addError))) throw addError;
      }
    }
  }
}

function isNotFound(error: unknown): boolean {
  return /not found/i.test(String((error as Error)?.message ?? error));
}
