import { afterEach, describe, expect, it } from 'vitest';
import { createExclusiveWork, type ExclusiveWork } from '../src/db/index.ts';
import { silentLogger, testPostgresAdminUrl } from '../src/testing.ts';

const opened: ExclusiveWork[] = [];
const replica = async () => {
  const work = await createExclusiveWork(testPostgresAdminUrl(), silentLogger());
  opened.push(work);
  return work;
};
afterEach(async () => {
  for (const work of opened.splice(0)) await work.close();
});

/** A pass that runs until `finish()` is called; `started` resolves once it runs. */
function heldPass() {
  let finish!: () => void;
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { running, finish, work: async () => (started(), await done, 'held') };
}

describe('work one replica at a time (session advisory locks)', () => {
  const name = `exclusive-test-${process.pid}-${Date.now()}`;

  it('runs a pass in one replica while another one skips it, then lets the other one run', async () => {
    const [a, b] = [await replica(), await replica()];
    const pass = heldPass();
    const first = a.tryExclusive(name, pass.work);
    await pass.running;
    expect(await b.tryExclusive(name, async () => 'second')).toEqual({ ran: false });
    // In the same process too: a session lock would let its own session in twice.
    expect(await a.tryExclusive(name, async () => 'again')).toEqual({ ran: false });
    pass.finish();
    expect(await first).toEqual({ ran: true, value: 'held' });
    expect(await b.tryExclusive(name, async () => 'second')).toEqual({ ran: true, value: 'second' });
  });

  it('frees the work at once when the holder\'s connection ends (its process died)', async () => {
    const [a, b] = [await replica(), await replica()];
    const pass = heldPass();
    void a.tryExclusive(`${name}-dies`, pass.work);
    await pass.running;
    expect(await b.tryExclusive(`${name}-dies`, async () => 'taken')).toEqual({ ran: false });
    await a.close();
    expect(await b.tryExclusive(`${name}-dies`, async () => 'taken')).toEqual({ ran: true, value: 'taken' });
    pass.finish();
  });

  it('skips the pass (and says so) when the database cannot be reached', async () => {
    const unreachable = await createExclusiveWork('postgres://nobody@127.0.0.1:1/none', silentLogger());
    opened.push(unreachable);
    expect(await unreachable.tryExclusive(name, async () => 'never')).toEqual({ ran: false });
  });
});
