import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { unseal, type Bus, type Logger } from '@sigil/kit';
import { STRATA_JOBS_STREAM, strataJobSubject, type BackupJob, type RestoreJob, type SealedJob, type StrataJobs } from '@sigil/proto';
import { runBackup } from './jobs/backup.ts';
import { runRestore } from './jobs/restore.ts';
import { createReporter } from './reports.ts';

export interface WorkerOptions {
  bus: Bus;
  log: Logger;
  secretsKey: Buffer;
  concurrency: number;
  consumerPrefix: string;
}

export interface Worker {
  /** Jobs running now. */
  active(): number;
  stop(): Promise<void>;
}

const ACK_WAIT_MS = 60_000;
const HEARTBEAT_MS = 20_000;
const JOB_TYPES: Array<keyof StrataJobs> = ['backup.run', 'restore.run'];

/**
 * Pulls sealed jobs from the work queue, at most `concurrency` at once. A running job tells JetStream it
 * is still working every 20 s; if the mover dies the job is delivered again after a minute, and a backup
 * whose manifest already exists is only reported again.
 */
export async function startWorker(options: WorkerOptions): Promise<Worker> {
  const { bus, log, secretsKey, concurrency } = options;
  const reporter = createReporter(bus.nc, bus.js, options.consumerPrefix);
  const controller = new AbortController();
  let running = 0;
  const inFlight = new Set<Promise<void>>();
  const loops: Array<{ stop: () => Promise<void> }> = [];

  const handle = async (msg: JsMsg): Promise<void> => {
    let job: SealedJob;
    let payload: unknown;
    try {
      job = msg.json<SealedJob>();
      payload = JSON.parse(unseal(secretsKey, job.sealed, job.type));
    } catch (error) {
      log.error({ err: error, subject: msg.subject }, 'dropping a job that cannot be opened (wrong STRATA_SECRETS_KEY?)');
      msg.term('cannot be opened');
      return;
    }
    const heartbeat = setInterval(() => msg.working(), HEARTBEAT_MS);
    try {
      log.info({ job: job.id, type: job.type }, 'job started');
      if (job.type === 'backup.run') await runBackup(payload as BackupJob, reporter, controller.signal);
      else await runRestore(payload as RestoreJob, reporter, controller.signal);
      msg.ack();
      log.info({ job: job.id, type: job.type }, 'job finished');
    } catch (error) {
      // Reports could not be sent (NATS down): let JetStream deliver the job again.
      log.error({ err: error, job: job.id }, 'job could not report; it will be redelivered');
      msg.nak(5_000);
    } finally {
      clearInterval(heartbeat);
    }
  };

  for (const type of JOB_TYPES) {
    const subject = strataJobSubject(type, options.consumerPrefix);
    const durable = `${options.consumerPrefix}mover__${subject.replace(/[.*>]/g, '_')}`;
    const config = { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, filter_subject: subject, ack_wait: ACK_WAIT_MS * 1e6, max_deliver: 5 };
    try {
      await bus.jsm.consumers.info(STRATA_JOBS_STREAM, durable);
    } catch {
      await bus.jsm.consumers.add(STRATA_JOBS_STREAM, config);
    }
    const consumer = await bus.js.consumers.get(STRATA_JOBS_STREAM, durable);
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        if (running >= concurrency) {
          await Promise.race([...inFlight, new Promise((resolve) => setTimeout(resolve, 500))]);
          continue;
        }
        const msg = await consumer.next({ expires: 2_000 }).catch(() => null);
        if (!msg) continue;
        running += 1;
        const task = handle(msg).finally(() => {
          running -= 1;
          inFlight.delete(task);
        });
        inFlight.add(task);
      }
    })();
    loops.push({ stop: async () => { stopped = true; await loop; } });
  }
  return {
    active: () => running,
    async stop() {
      await Promise.all(loops.map((l) => l.stop()));
      // Running jobs finish on their own unless the process is being killed; abort them so their cleanup runs.
      controller.abort(new Error('the mover is shutting down'));
      await Promise.allSettled([...inFlight]);
    },
  };
}
