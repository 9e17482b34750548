import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createMemoryBus, type Bus } from '@sigil/kit/bus';
import { seal } from '@sigil/kit/crypto';
import { silentLogger } from '@sigil/kit/testing';
import { STRATA_JOBS_STREAM, strataEventSubject, strataJobSubject, type BackupJob } from '@sigil/proto';
import { startWorker, type OpenedJob } from '../src/worker.ts';

const key = randomBytes(32);

/** A backup job as the catalog sends it (valid against proto/jobs/backup.run.schema.json). */
const backupJob = (id: string): BackupJob => ({
  backupId: id,
  namespace: 'default',
  name: `main-${id}`,
  target: { namespace: 'default', name: 'main', uid: 'uid-1', org: '', project: '', env: '' },
  policy: 'nightly',
  reason: 'test',
  requestedBy: 'test',
  database: { engine: 'postgres', host: '127.0.0.1', port: 5432, username: 'postgres', password: '' },
  databases: ['*'],
  excludeData: [],
  excludeTables: [],
  store: {
    endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', bucket: 'b', prefix: '', pathStyle: true, accessKeyId: 'a', secretAccessKey: 's',
    disableConditionalPut: false, partSizeBytes: 8 * 1024 * 1024, concurrency: 2, storeName: 'local', ageRecipients: ['age1x'], catalogRecipients: [],
  },
  compression: { algorithm: 'zstd', level: 'default', threads: 1 },
  bandwidthBytesPerSecond: 0,
  stallTimeoutMs: 60_000,
  activeDeadlineMs: 0,
});
const sealedJob = (id: string, secretsKey = key, job: unknown = backupJob(id)) => ({ id, type: 'backup.run', sealed: seal(secretsKey, JSON.stringify(job), 'backup.run') });

async function until(ready: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The bus, recording how each handled message settled: acknowledged (the handler resolved) or offered again (it threw). */
function settling(bus: Bus): { bus: Bus; settled: Array<'ack' | 'again'> } {
  const settled: Array<'ack' | 'again'> = [];
  const consume: Bus['consume'] = (options) =>
    bus.consume({
      ...options,
      handle: (message) =>
        options.handle(message).then(
          () => void settled.push('ack'),
          (error: unknown) => {
            settled.push('again');
            throw error;
          },
        ),
    });
  return { bus: { ...bus, consume }, settled };
}

const WAITING = 'job delivered again while it runs here; waiting for the running attempt';

describe('the mover worker', () => {
  it('opens each job, runs it once, and reports through the bus', async () => {
    const bus = createMemoryBus();
    const ran: OpenedJob[] = [];
    const worker = await startWorker({
      bus, log: silentLogger(), secretsKey: key, concurrency: 1, consumerPrefix: 'w1',
      run: async (job, reporter) => {
        ran.push(job);
        await reporter.report('backup.failed', { backupId: job.id, message: 'test', finishedAt: new Date(0).toISOString() });
      },
    });
    await bus.publish(strataJobSubject('backup.run', 'w1'), sealedJob('b1'), { msgId: 'b1' });
    await until(() => ran.length === 1 && bus.published().length === 2);
    await worker.stop();
    expect(ran).toEqual([{ id: 'b1', type: 'backup.run', payload: backupJob('b1') }]);
    expect(bus.published()[1]).toMatchObject({ subject: strataEventSubject('backup.failed', 'w1'), payload: { type: 'backup.failed', data: { backupId: 'b1' } } });
  });

  it('terminates a job sealed with another key and goes on with the next', async () => {
    const bus = createMemoryBus();
    const ran: string[] = [];
    const worker = await startWorker({ bus, log: silentLogger(), secretsKey: key, concurrency: 1, consumerPrefix: 'w2', run: async (job) => void ran.push(job.id) });
    await bus.publish(strataJobSubject('backup.run', 'w2'), sealedJob('foreign', randomBytes(32)));
    await bus.publish(strataJobSubject('backup.run', 'w2'), sealedJob('ours'));
    await until(() => ran.length === 1);
    await worker.stop();
    expect(ran).toEqual(['ours']);
  });

  it('terminates and logs a message that is not a sealed job, or whose job does not match its schema (proto/jobs)', async () => {
    const bus = createMemoryBus();
    const log = silentLogger();
    const errors = vi.spyOn(log, 'error');
    const ran: string[] = [];
    const worker = await startWorker({ bus, log, secretsKey: key, concurrency: 1, consumerPrefix: 'w5', run: async (job) => void ran.push(job.id) });
    const subject = strataJobSubject('backup.run', 'w5');
    await bus.publish(subject, { ...sealedJob('loud'), priority: 'high' });
    await bus.publish(subject, { ...sealedJob('blank'), sealed: '' });
    await bus.publish(subject, sealedJob('partial', key, { backupId: 'partial' }));
    await bus.publish(subject, sealedJob('whole'));
    await until(() => ran.length === 1);
    await worker.stop();
    expect(ran).toEqual(['whole']);
    const terminated = errors.mock.calls.map(([fields, message]) => ({ message, reason: (fields as { err: Error }).err.message }));
    expect(terminated).toEqual([
      { message: 'terminating a message that cannot be decoded', reason: 'a sealed job does not match its schema: / must NOT have additional properties (priority)' },
      { message: 'terminating a message that cannot be decoded', reason: 'a sealed job does not match its schema: /sealed must NOT have fewer than 1 characters' },
      { message: 'terminating a message that cannot be decoded', reason: expect.stringMatching(/^a backup\.run job does not match its schema: .*must have required property 'namespace'/) },
    ]);
  });

  it('offers a job again when its reports could not be sent', async () => {
    const bus = createMemoryBus();
    let attempts = 0;
    const worker = await startWorker({
      bus, log: silentLogger(), secretsKey: key, concurrency: 1, consumerPrefix: 'w3', retryDelaysMs: [0],
      run: async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('NATS is down');
      },
    });
    await bus.publish(strataJobSubject('backup.run', 'w3'), sealedJob('b3'));
    await until(() => attempts === 2);
    await worker.stop();
    expect(attempts).toBe(2);
  });

  it('never starts a job delivered again while it runs here: the delivery waits, then is acknowledged with the run', async () => {
    const { bus, settled } = settling(createMemoryBus());
    const log = silentLogger();
    const warnings = vi.spyOn(log, 'warn');
    let runs = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const worker = await startWorker({
      bus, log, secretsKey: key, concurrency: 2, consumerPrefix: 'w6', retryDelaysMs: [0],
      run: async () => {
        runs += 1;
        await finished;
      },
    });
    const subject = strataJobSubject('backup.run', 'w6');
    const job = sealedJob('b6');
    await bus.publish(subject, job, { msgId: 'b6' });
    await until(() => runs === 1);
    // JetStream hands the same message out again; the memory bus stands for it with a second message of the same job.
    await bus.publish(subject, job);
    await until(() => warnings.mock.calls.some(([, message]) => message === WAITING));
    expect(runs).toBe(1);
    finish();
    await until(() => settled.length === 2);
    await worker.stop();
    expect(runs).toBe(1);
    expect(settled).toEqual(['ack', 'ack']);
  });

  it('runs a job that waited for a running attempt itself when that attempt could not report, one run at a time', async () => {
    const { bus, settled } = settling(createMemoryBus());
    const log = silentLogger();
    const warnings = vi.spyOn(log, 'warn');
    let runs = 0;
    let running = 0;
    let most = 0;
    let fail!: () => void;
    const failing = new Promise<void>((resolve) => (fail = resolve));
    const worker = await startWorker({
      // The first attempt's own redelivery comes long after this test.
      bus, log, secretsKey: key, concurrency: 2, consumerPrefix: 'w7', retryDelaysMs: [60_000],
      run: async () => {
        runs += 1;
        running += 1;
        most = Math.max(most, running);
        try {
          if (runs === 1) {
            await failing;
            throw new Error('NATS is down');
          }
        } finally {
          running -= 1;
        }
      },
    });
    const subject = strataJobSubject('backup.run', 'w7');
    await bus.publish(subject, sealedJob('b7'), { msgId: 'b7' });
    await until(() => runs === 1);
    await bus.publish(subject, sealedJob('b7'));
    await until(() => warnings.mock.calls.some(([, message]) => message === WAITING));
    fail();
    await until(() => settled.length === 2);
    await worker.stop();
    expect(runs).toBe(2);
    expect(most).toBe(1);
    expect(settled).toEqual(['again', 'ack']);
  });

  it('runs at most `concurrency` jobs at once across backups and restores', async () => {
    const bus = createMemoryBus({ streams: { [STRATA_JOBS_STREAM]: ['strata.jobs.>'] } });
    let running = 0;
    let most = 0;
    let done = 0;
    const worker = await startWorker({
      bus, log: silentLogger(), secretsKey: key, concurrency: 2, consumerPrefix: 'w4',
      run: async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        done += 1;
      },
    });
    for (let i = 0; i < 6; i++) await bus.publish(strataJobSubject('backup.run', 'w4'), sealedJob(`b${i}`));
    await until(() => done === 6);
    expect(worker.active()).toBe(0);
    await worker.stop();
    expect(most).toBe(2);
  });
});
