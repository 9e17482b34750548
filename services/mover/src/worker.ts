import { consumerName, type Bus, type BusMessage, type RunningConsumer } from '@sigil/kit/bus';
import { unseal } from '@sigil/kit/crypto';
import type { Logger } from '@sigil/kit/log';
import { STRATA_JOBS_STREAM, strataJobSubject, strataStreamControlSubject, type BackupJob, type RestoreJob, type StreamControlMessage, type StreamJob } from '@sigil/proto/strata-jobs';
import { assertStrataJob, decodeSealedJob } from '@sigil/proto/strata-wire';
import { runBackup } from './jobs/backup.ts';
import type { Claim } from './jobs/backup-lease.ts';
import { runRestore } from './jobs/restore.ts';
import { runStream, type StopRequest, type StreamControl } from './jobs/stream.ts';
import { createReporter, type Reporter } from './reports.ts';

export interface WorkerOptions {
  bus: Bus;
  log: Logger;
  secretsKey: Buffer;
  concurrency: number;
  /** Change-log streams one mover runs at once (long-lived, apart from the backup and restore slots). */
  streams?: number;
  consumerPrefix: string;
  /** Delays before a job whose reports failed is offered again (default 5 s, 15 s, 1 min). */
  retryDelaysMs?: readonly number[];
  /** Runs one opened job (tests replace the engines). */
  run?: RunJob;
}

type RunJob = (job: OpenedJob, reporter: Reporter, signal: AbortSignal, control: StreamControl) => Promise<void>;

export interface Worker {
  /** Jobs running now. */
  active(): number;
  stop(): Promise<void>;
}

export type OpenedJob =
  | { id: string; type: 'backup.run'; payload: BackupJob }
  | { id: string; type: 'restore.run'; payload: RestoreJob }
  | { id: string; type: 'stream.run'; payload: StreamJob };

const ACK_WAIT_MS = 60_000;
const HEARTBEAT_MS = 20_000;
/** A job whose reports could not be sent is offered again after these delays. */
const RETRY_DELAYS_MS = [5_000, 15_000, 60_000];
const STREAM_RETRY_DELAYS_MS = [2_000, 5_000, 15_000, 30_000];

/**
 * Works sealed jobs from the work queue, at most `concurrency` at once. A running job tells JetStream it is still
 * working every 20 s; if the mover dies the job is delivered again after a minute, and a backup whose manifest already
 * exists is only reported again. A heartbeat can still come late (a starved event loop) and the job be delivered again
 * while it runs: here the new delivery waits for the running attempt (`awaitRunningAttempt`), in another mover the
 * backup's lease makes it wait (jobs/backup-lease.ts). A job that cannot be opened (another STRATA_SECRETS_KEY) is
 * terminated and logged.
 */
export async function startWorker(options: WorkerOptions): Promise<Worker> {
  const { bus, log, secretsKey } = options;
  const reporter = createReporter(bus, options.consumerPrefix);
  const controller = new AbortController();
  const run = options.run ?? ((...args: Parameters<RunJob>) => runJob(...args, log));
  let running = 0;
  const stops = new Map<string, (asked: StopRequest) => void>();
  const controlSubscription = await bus.listen(strataStreamControlSubject(options.consumerPrefix), (payload) => {
    const message = payload as StreamControlMessage;
    const asked = { release: message.release === true, releasePreviews: message.release === true || message.releasePreviews === true };
    for (const key of [message.streamId, message.targetUid]) if (key) stops.get(key)?.(asked);
  });

  const controlFor = (job: OpenedJob): { control: StreamControl; release(): void } => {
    if (job.type !== 'stream.run') return { control: { stopped: new Promise(() => {}) }, release: () => {} };
    let stop!: (asked: StopRequest) => void;
    const stopped = new Promise<StopRequest>((resolve) => (stop = resolve));
    const keys = [job.payload.streamId, job.payload.targetUid];
    for (const key of keys) stops.set(key, stop);
    return { control: { stopped }, release: () => keys.forEach((key) => stops.get(key) === stop && stops.delete(key)) };
  };

  /** The attempt of each job running in this mover, by job id; it leaves the map as it settles. */
  const attempts = new Map<string, Promise<void>>();

  const handle = (message: BusMessage<OpenedJob>): Promise<void> => {
    const job = message.data;
    const current = attempts.get(job.id);
    if (current) return awaitRunningAttempt(message, current);
    const attempt = runAttempt(message).finally(() => attempts.delete(job.id));
    attempts.set(job.id, attempt);
    return attempt;
  };

  /**
   * A job delivered again while its attempt runs here (JetStream handed it out again: a heartbeat came late on a starved
   * event loop) never starts a second run. The delivery is kept alive until the attempt ends, then settles with it:
   * acknowledged when the attempt resolved (it reported the job's outcome); when the attempt threw (its reports could
   * not be sent) this delivery is handled as any other, unless the mover is stopping (then it is offered again).
   */
  const awaitRunningAttempt = async (message: BusMessage<OpenedJob>, current: Promise<void>): Promise<void> => {
    const job = message.data;
    log.warn({ job: job.id, type: job.type, attempt: message.deliveryCount }, 'job delivered again while it runs here; waiting for the running attempt');
    const heartbeat = setInterval(() => message.working(), HEARTBEAT_MS);
    const settled = await current.then(
      () => true,
      () => false,
    ).finally(() => clearInterval(heartbeat));
    if (settled) return;
    if (controller.signal.aborted) throw new Error('the mover is shutting down');
    return handle(message);
  };

  const runAttempt = async (message: BusMessage<OpenedJob>): Promise<void> => {
    const job = message.data;
    running += 1;
    const heartbeat = setInterval(() => message.working(), HEARTBEAT_MS);
    const { control, release } = controlFor(job);
    try {
      log.info({ job: job.id, type: job.type, attempt: message.deliveryCount }, 'job started');
      await run(job, reporter, controller.signal, control);
      log.info({ job: job.id, type: job.type }, 'job finished');
    } catch (error) {
      // The job reports its own failures; reaching here means the reports could not be sent (NATS down), a backup
      // stood down while another attempt of it ran elsewhere (the mover stopping, the store failing), or a stream
      // failed (it said so in its status) and is to be started again.
      log.error({ err: error, job: job.id, type: job.type }, 'job attempt ended in error; it will be redelivered');
      throw error;
    } finally {
      release();
      clearInterval(heartbeat);
      running -= 1;
    }
  };

  const consume = (name: string, types: Array<OpenedJob['type']>, limits: { concurrency: number; maxDeliver: number; retryDelaysMs: readonly number[] }): Promise<RunningConsumer> =>
    bus.consume<OpenedJob>({
      stream: STRATA_JOBS_STREAM,
      durable: consumerName(options.consumerPrefix, name),
      subjects: types.map((type) => strataJobSubject(type, options.consumerPrefix)),
      ackWaitMs: ACK_WAIT_MS,
      log,
      decode: (payload) => openJob(payload, secretsKey),
      handle,
      ...limits,
    });
  const consumer = await consume('mover', ['backup.run', 'restore.run'], { concurrency: options.concurrency, maxDeliver: 5, retryDelaysMs: options.retryDelaysMs ?? RETRY_DELAYS_MS });
  // A stream runs until stopped; one that ends in failure (or with the mover) is offered again soon, to any mover.
  const streams = await consume('mover-streams', ['stream.run'], { concurrency: options.streams ?? 16, maxDeliver: 1000, retryDelaysMs: options.retryDelaysMs ?? STREAM_RETRY_DELAYS_MS });
  return {
    active: () => running,
    async stop() {
      // Running jobs finish on their own unless the process is being killed; abort them so their cleanup runs.
      controller.abort(new Error('the mover is shutting down'));
      controlSubscription.unsubscribe();
      await Promise.all([consumer.stop(), streams.stop()]);
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
  if (job.type === 'stream.run') {
    assertStrataJob('stream.run', opened);
    return { id: job.id, type: 'stream.run', payload: opened };
  }
  assertStrataJob('restore.run', opened);
  return { id: job.id, type: 'restore.run', payload: opened };
}

function runJob(job: OpenedJob, reporter: Reporter, signal: AbortSignal, control: StreamControl, log: Logger): Promise<void> {
  if (job.type === 'stream.run') return runStream(job.payload, reporter, signal, { ...control, log });
  if (job.type === 'restore.run') return runRestore(job.payload, reporter, signal);
  const onWaiting = (holder: Claim) => log.warn({ job: job.id, holder: holder.holder, since: holder.since }, 'another attempt of this backup runs; waiting for it to end');
  return runBackup(job.payload, reporter, signal, { onWaiting });
}
