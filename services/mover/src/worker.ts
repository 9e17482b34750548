import { consumerName, type Bus, type BusMessage, type RunningConsumer } from '@sigil/kit/bus';
import { unseal } from '@sigil/kit/crypto';
import type { Logger } from '@sigil/kit/log';
import { STRATA_JOBS_STREAM, STRATA_JOB_TYPES, strataJobSubject, type BackupJob, type RestoreJob } from '@sigil/proto/strata-jobs';
import { assertStrataJob, decodeSealedJob } from '@sigil/proto/strata-wire';
import { runBackup } from './jobs/backup.ts';
import { runRestore } from './jobs/restore.ts';
import { createReporter, type Reporter } from './reports.ts';

export interface WorkerOptions {
  bus: Bus;
  log: Logger;
  secretsKey: Buffer;
  concurrency: number;
  consumerPrefix: string;
  /** Delays before a job whose reports failed is offered again (default 5 s, 15 s, 1 min). */
  retryDelaysMs?: readonly number[];
  /** Runs one opened job (tests replace the engines). */
  run?: (job: OpenedJob, reporter: Reporter, signal: AbortSignal) => Promise<void>;
}

export interface Worker {
  /** Jobs running now. */
  active(): number;
  stop(): Promise<void>;
}

export type OpenedJob = { id: string; type: 'backup.run'; payload: BackupJob } | { id: string; type: 'restore.run'; payload: RestoreJob };

const ACK_WAIT_MS = 60_000;
const HEARTBEAT_MS = 20_000;
/** A job whose reports could not be sent is offered again after these delays. */
const RETRY_DELAYS_MS = [5_000, 15_000, 60_000];

/**
 * Works sealed jobs from the work queue, at most `concurrency` at once. A running job tells JetStream it is still
 * working every 20 s; if the mover dies the job is delivered again after a minute, and a backup whose manifest already
 * exists is only reported again. A job that cannot be opened (another STRATA_SECRETS_KEY) is terminated and logged.
 */
export async function startWorker(options: WorkerOptions): Promise<Worker> {
  const { bus, log, secretsKey } = options;
  const reporter = createReporter(bus, options.consumerPrefix);
  const controller = new AbortController();
  const run = options.run ?? runJob;
  let running = 0;

  const handle = async (message: BusMessage<OpenedJob>): Promise<void> => {
    const job = message.data;
    running += 1;
    const heartbeat = setInterval(() => message.working(), HEARTBEAT_MS);
    try {
      log.info({ job: job.id, type: job.type, attempt: message.deliveryCount }, 'job started');
      await run(job, reporter, controller.signal);
      log.info({ job: job.id, type: job.type }, 'job finished');
    } catch (error) {
      // The job reports its own failures; reaching here means the reports could not be sent (NATS down).
      log.error({ err: error, job: job.id }, 'job could not report; it will be redelivered');
      throw error;
    } finally {
      clearInterval(heartbeat);
      running -= 1;
    }
  };

  const consumer: RunningConsumer = await bus.consume<OpenedJob>({
    stream: STRATA_JOBS_STREAM,
    durable: consumerName(options.consumerPrefix, 'mover'),
    subjects: STRATA_JOB_TYPES.map((type) => strataJobSubject(type, options.consumerPrefix)),
    concurrency: options.concurrency,
    ackWaitMs: ACK_WAIT_MS,
    maxDeliver: 5,
    retryDelaysMs: options.retryDelaysMs ?? RETRY_DELAYS_MS,
    log,
    decode: (payload) => openJob(payload, secretsKey),
    handle,
  });
  return {
    active: () => running,
    async stop() {
      // Running jobs finish on their own unless the process is being killed; abort them so their cleanup runs.
      controller.abort(new Error('the mover is shutting down'));
      await consumer.stop();
    },
  };
}

/**
 * Opens a sealed job; throws (and the message is terminated) when it is not a sealed job, cannot be opened with our
 * key, or does not match its schema (proto/jobs/sealed-job, then the job's own).
 */
export function openJob(payload: unknown, secretsKey: Buffer): OpenedJob {
  const job = decodeSealedJob(payload);
  let opened: unknown;
  try {
    opened = JSON.parse(unseal(secretsKey, job.sealed, job.type));
  } catch {
    throw new Error('the job cannot be opened (wrong STRATA_SECRETS_KEY?)');
  }
  if (job.type === 'backup.run') {
    assertStrataJob('backup.run', opened);
    return { id: job.id, type: 'backup.run', payload: opened };
  }
  assertStrataJob('restore.run', opened);
  return { id: job.id, type: 'restore.run', payload: opened };
}

function runJob(job: OpenedJob, reporter: Reporter, signal: AbortSignal): Promise<void> {
  return job.type === 'backup.run' ? runBackup(job.payload, reporter, signal) : runRestore(job.payload, reporter, signal);
}
