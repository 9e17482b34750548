import { rm } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RELIABILITY_MODE, quick } from './mode.ts';
import { envelopeProblems, filesUnder, jetStreamBacklog, usageProblems, waitForEnvelopesToSettle, webhookProblems } from './faults-checks.ts';
import { SmallVolume } from './faults-disk.ts';
import { moverWorkFolder, startFaultStack, type FaultStack } from './faults-stack.ts';
import { applyQuickstart, backupNow, backupsOf, SourceWriter, TARGET, type BackupLoad } from './load-backups.ts';
import { LoadClient } from './load-client.ts';
import { runEnvelopeLoad, setUpEnvelopes, type EnvelopeRun, type EnvelopeSetup } from './load-envelopes.ts';
import { FlakyReceiver } from './load-webhooks.ts';

/**
 * Faults under load (docs/reliability.md): envelope flows with webhooks to a receiver that fails one first delivery
 * in four, and a Strata Postgres target streaming its WAL and backed up now and then, while every process of the
 * stack is killed with -9 in turn, NATS and Postgres are restarted, and the mover's work folder (a small volume of its
 * own) fills up. Then nothing may be lost, duplicated, stuck or left behind.
 */
const LOAD = {
  /** Envelope flows started at least, and at most (flows keep starting while the faults run). */
  minEnvelopes: quick(10, 100),
  maxEnvelopes: quick(40, 2000),
  parallel: quick(2, 4),
  /** The free plan includes 100 live envelopes a month: a new organization every 60. */
  perOrganization: 60,
  /** Rounds of faults (each: every process killed once, NATS and Postgres restarted, the work folder filled); long mode runs rounds for ten minutes. */
  roundsUntil: (started: number, round: number) => (RELIABILITY_MODE === 'long' ? Date.now() - started < 10 * 60_000 : round < 1),
  backupEveryMs: quick(30_000, 90_000),
  writeEveryMs: 100,
  volumeMegabytes: 128,
};

const began = Date.now();
const log = (line: string) => console.log(`[faults +${Math.round((Date.now() - began) / 1000)}s] ${line}`);
/** The stack's state folder (its logs) is kept when a test failed. */
let failed = false;
let faults: FaultStack;
let client: LoadClient;
const receiver = new FlakyReceiver(4);
let writer: SourceWriter;
let backups: BackupLoad;
const setups: EnvelopeSetup[] = [];
const runs: EnvelopeRun[] = [];
const volumes: SmallVolume[] = [];
const figures = { kills: 0, natsRestarts: 0, postgresRestarts: 0, diskFills: 0, diskFailure: '', restarts: [] as string[] };

beforeAll(async () => {
  faults = await startFaultStack(log);
  client = new LoadClient(faults.stack.gatewayUrl);
  const receiverUrl = await receiver.start();
  setups.push(await setUpEnvelopes(client, receiverUrl, 'first'));
  receiver.useSecret(setups[0]!.webhookSecret);
  writer = await SourceWriter.create(faults.postgres().adminUrl, 'faults_source');
  writer.start(LOAD.writeEveryMs);
  backups = await applyQuickstart(client, faults.stateDir, 'faults_source');
  await client.until(`/api/v1/targets/${TARGET}`, backups.token, (b: { target: { pitr?: boolean } }) => b.target.pitr === true, 90_000);
}, 240_000);

afterEach(({ task }) => {
  if (task.result?.state === 'fail') failed = true;
});

afterAll(async () => {
  await writer?.stop();
  await receiver.stop();
  if (failed) log(`a test failed: the stack's logs stay in ${faults?.stateDir}/logs`);
  await faults?.stop({ keepState: failed });
  for (const volume of volumes) await volume.unmount();
}, 120_000);

/** Kills the mover, and mounts a small volume on the new mover's work folder before it takes a job that writes there. */
async function killMover(): Promise<void> {
  const { newPid } = await faults.stack.killAndRestart('mover');
  figures.kills += 1;
  const previous = volumes.at(-1);
  const volume = new SmallVolume(moverWorkFolder(newPid), LOAD.volumeMegabytes, faults.stateDir);
  log(`mover work folder ${volume.dir} on ${await volume.mount()} of ${LOAD.volumeMegabytes} MB`);
  volumes.push(volume);
  await previous?.unmount();
}

/** What the target's status says of its change-log streamer. */
interface StreamStatus {
  streamerReady?: boolean;
  streamMessage?: string;
  streamFailure?: { message: string; at: string };
  coveredUntil?: string;
}

/** Fills the mover's volume while it streams WAL: the stream must fail visibly, then recover once space is freed. */
async function fillTheWorkFolder(): Promise<void> {
  const volume = volumes.at(-1)!;
  const pitrStatus = async () =>
    ((await client.send('GET', `/api/v1/targets/${TARGET}`, { headers: backups.token })).body as { status?: { pitr?: StreamStatus } }).status?.pitr ?? {};
  await waitUntil('the WAL stream writing into the small volume', async () => filesUnder(volume.dir).some((f) => f.includes('strata-wal-')), 150_000);
  // A stream catching up after the mover's restart may have filled the volume on its own: it must be healthy first.
  await waitUntil('the WAL stream to stream', async () => {
    const pitr = await pitrStatus();
    return pitr.streamerReady === true && /streaming/.test(pitr.streamMessage ?? '');
  }, 150_000);
  log('the WAL stream writes into the small volume; filling it');
  const filledAt = Date.now();
  const filler = await volume.fill(512 * 1024);
  figures.diskFills += 1;
  await writer.switchWal();
  // The failure stays in the status (`streamFailure`) even when the next streamer starts streaming a moment later.
  const failed = await waitUntil('the stream failing for lack of space', async () => {
    const failure = (await pitrStatus()).streamFailure;
    return failure && /no space left on device/i.test(failure.message) && Date.parse(failure.at) >= filledAt - 1_000 ? failure.message : undefined;
  }, 90_000);
  figures.diskFailure = failed.slice(0, 300);
  log(`stream failure seen: ${figures.diskFailure}`);
  await rm(filler);
  const freedAt = Date.now();
  await writer.switchWal();
  log('space freed; waiting for the store to cover what was committed since');
  // Coverage, not a count of segments: retention expires old segments as new backups are taken.
  await waitUntil('the stream covering the time after space was freed', async () => Date.parse((await pitrStatus()).coveredUntil ?? '') > freedAt, 120_000);
}

async function newOrganization(n: number): Promise<EnvelopeSetup> {
  const setup = await setUpEnvelopes(client, receiver.url, `org${n}`);
  receiver.useSecret(setup.webhookSecret);
  return setup;
}

async function waitUntil<T>(what: string, probe: () => Promise<T | undefined | false>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe(`faults under load (${RELIABILITY_MODE} mode)`, () => {
  it('keeps serving while each process is killed with -9, NATS and Postgres restart, and the mover\'s work folder fills', async () => {
    const started = Date.now();
    let faultsOver = false;
    const load = runEnvelopeLoad(client, async (n) => (setups[n] ??= await newOrganization(n)), {
      count: LOAD.maxEnvelopes,
      keepGoing: (index) => index < LOAD.minEnvelopes || !faultsOver,
      parallel: LOAD.parallel,
      perOrganization: LOAD.perOrganization,
      prefix: `faults-${Date.now()}`,
      runs,
    });
    const backupTimer = setInterval(() => void backupNow(client, backups, 'faults: backup under load').catch((error: Error) => log(`backup-now: ${error.message}`)), LOAD.backupEveryMs);
    await backupNow(client, backups, 'faults: first backup');
    try {
      for (let round = 0; LOAD.roundsUntil(started, round); round++) {
        await killMover();
        for (const name of faults.stack.processes.map((p) => p.name).filter((n) => n !== 'mover')) {
          const { oldPid, newPid } = await faults.stack.killAndRestart(name);
          figures.kills += 1;
          log(`killed ${name} (pid ${oldPid}); back as pid ${newPid}`);
        }
        figures.restarts.push(`nats down ${await faults.restartNats()} ms`);
        figures.natsRestarts += 1;
        log('nats restarted');
        figures.restarts.push(`postgres down ${await faults.restartPostgres()} ms`);
        figures.postgresRestarts += 1;
        log('postgres restarted');
        await fillTheWorkFolder();
      }
    } finally {
      faultsOver = true;
      clearInterval(backupTimer);
      await load;
      await writer.stop();
    }
    log(`faults done after ${Math.round((Date.now() - started) / 1000)} s: ${JSON.stringify(figures)}`);
    expect(runs.filter((r) => r.error).map((r) => `${r.externalId}: ${r.error}`)).toEqual([]);
  }, quick(600_000, 40 * 60_000));

  it('ends every backup Succeeded, or Failed with its reason; none stays running', async () => {
    const settled = await waitUntil('every backup to end', async () => {
      const list = await backupsOf(client, backups);
      return list.every((b) => ['Succeeded', 'Failed', 'Expired'].includes(b.phase)) ? list : undefined;
    }, 180_000);
    expect(settled.filter((b) => b.phase === 'Failed' && !b.error)).toEqual([]);
    expect(settled.filter((b) => b.phase === 'Succeeded').length).toBeGreaterThan(0);
    log(`backups: ${JSON.stringify(settled.map((b) => ({ phase: b.phase, error: b.error })))}`);
  }, 200_000);

  it('leaves every envelope in the state its signer drove it to, sealed once, with a valid audit chain', async () => {
    // The trail is written by one consumer, one event at a time in the stream's order: let it catch up first.
    await waitUntil('the audit trail to catch up', async () => {
      const audit = (await jetStreamBacklog(faults.nats().url)).filter((c) => c.consumer.includes('evidence-audit'));
      return audit.every((c) => c.pending === 0 && c.ackPending === 0) || undefined;
    }, 60_000).catch(() => undefined);
    const unsettled = await waitForEnvelopesToSettle(client, runs, 60_000);
    if (unsettled.length > 0) log(`envelopes not settled after a minute: ${unsettled.join(', ')}`);
    expect(await envelopeProblems(client, faults, runs)).toEqual([]);
  }, 240_000);

  it('delivers every webhook event at least once and records it once', async () => {
    const endpointIds = setups.map((s) => s.endpointId);
    await waitUntil('every webhook delivery to end', async () => {
      const open = await faults.sql<{ n: number }>('sigil_webhooks', "SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ANY($1) AND status NOT IN ('succeeded', 'failed')", [endpointIds]);
      return open[0]!.n === 0;
    }, 120_000);
    const { problems, events } = await webhookProblems(faults, receiver, endpointIds, runs);
    expect(problems).toEqual([]);
    log(`webhook events: ${events}, deliveries accepted ${receiver.acceptedDeliveries}, refused on purpose ${receiver.refusedOnPurpose}`);
  }, 150_000);

  it('counts usage once', async () => {
    expect(await usageProblems(client, runs)).toEqual([]);
  }, 60_000);

  it('loses no committed row of the backed-up database', async () => {
    const rows = await writer.count();
    expect(rows).toBeGreaterThanOrEqual(writer.committed);
    // A commit whose answer was lost to the restart may have happened: at most those more.
    expect(rows).toBeLessThanOrEqual(writer.committed + writer.failedCommits);
  });

  it('leaves no replication slot, no work file and no unacknowledged message behind', async () => {
    const deleted = await client.send('DELETE', '/api/v1/resources/BackupTarget/default/postgres', { headers: backups.token });
    expect(deleted.status).toBeLessThan(300);
    const slots = await waitUntil('the target\'s replication slots to be dropped', async () => {
      const left = await faults.sql<{ slot_name: string }>('postgres', 'SELECT slot_name FROM pg_replication_slots');
      return left.length === 0 ? left : undefined;
    }, 60_000).catch(async () => faults.sql<{ slot_name: string }>('postgres', 'SELECT slot_name FROM pg_replication_slots'));
    expect(slots).toEqual([]);
    const volume = volumes.at(-1)!;
    await waitUntil('the mover\'s work folder to empty', async () => filesUnder(volume.dir).length === 0, 30_000).catch(() => undefined);
    expect(filesUnder(volume.dir)).toEqual([]);
    const backlog = await waitUntil('JetStream to drain', async () => {
      const consumers = await jetStreamBacklog(faults.nats().url);
      return consumers.every((c) => c.pending === 0 && c.ackPending === 0) ? consumers : undefined;
    }, 60_000).catch(async () => jetStreamBacklog(faults.nats().url));
    expect(backlog.filter((c) => c.pending > 0 || c.ackPending > 0)).toEqual([]);
    const failed = client.tally.failedAttempts;
    log(`figures: ${JSON.stringify({ mode: RELIABILITY_MODE, ...figures, requests: client.tally.requests, failedAttempts: failed, envelopes: runs.length, byIntent: countBy(runs.map((r) => r.intent)), consumers: backlog.length, committedRows: writer.committed })}`);
    for (const error of client.tally.internalErrors) log(`500 at ${error.at}: ${error.request} → ${error.body}`);
  }, 200_000);
});

function countBy(values: string[]): Record<string, number> {
  return values.reduce<Record<string, number>>((acc, v) => ({ ...acc, [v]: (acc[v] ?? 0) + 1 }), {});
}
