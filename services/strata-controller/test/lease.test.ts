import { V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { createLogger } from '@sigil/kit/log';
import { afterEach, describe, expect, it } from 'vitest';
import { createLeaderElection, type LeaderElection, type LeaseApi } from '../src/lease.ts';

/** Leases in memory with the API server's optimistic concurrency (a write with an old resourceVersion: 409). */
function memoryLeases() {
  const leases = new Map<string, V1Lease>();
  let version = 0;
  let failing = false;
  let hanging = false;
  let failedCalls = 0;
  const conflict = () => Object.assign(new Error('Conflict'), { code: 409 });
  const check = async () => {
    if (hanging) await new Promise(() => {}); // an API server that never answers
    if (failing) {
      failedCalls += 1;
      throw Object.assign(new Error('connection refused'), { code: 0 });
    }
  };
  const store = (key: string, lease: V1Lease) => {
    const copy = structuredClone({ ...lease, metadata: { ...lease.metadata, resourceVersion: String(++version) } });
    leases.set(key, copy);
    return structuredClone(copy);
  };
  const api: LeaseApi = {
    async read(ns, name) {
      await check();
      const lease = leases.get(`${ns}/${name}`);
      return lease && structuredClone(lease);
    },
    async create(ns, lease) {
      await check();
      if (leases.has(`${ns}/${lease.metadata?.name}`)) throw conflict();
      return store(`${ns}/${lease.metadata?.name}`, lease);
    },
    async replace(ns, name, lease) {
      await check();
      if (leases.get(`${ns}/${name}`)?.metadata?.resourceVersion !== lease.metadata?.resourceVersion) throw conflict();
      return store(`${ns}/${name}`, lease);
    },
  };
  return {
    api,
    holder: () => leases.get('strata/ctl')?.spec?.holderIdentity,
    setHolder(identity: string) {
      const lease = leases.get('strata/ctl') as V1Lease;
      store('strata/ctl', { ...lease, spec: { ...lease.spec, holderIdentity: identity, renewTime: new V1MicroTime() } });
    },
    fail: (value: boolean) => (failing = value),
    hang: (value: boolean) => (hanging = value),
    failedCalls: () => failedCalls,
  };
}

const log = createLogger('lease-test', 'silent');
const electors: LeaderElection[] = [];
afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
});

function elector(api: LeaseApi, identity: string, events: string[], durationSeconds = 2, now?: () => number) {
  const election = createLeaderElection({
    now,
    leases: api,
    namespace: 'strata',
    name: 'ctl',
    identity,
    durationSeconds,
    renewMs: 50,
    log,
    onStartedLeading: () => events.push(`${identity} leads`),
    onStoppedLeading: () => events.push(`${identity} stops`),
  });
  electors.push(election);
  return election;
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** `a` leading a one-second Lease on a clock the test moves (`advance`), so no wall-clock bound is needed. */
async function leaderOnTestClock() {
  let clock = Date.now();
  const leases = memoryLeases();
  const events: string[] = [];
  const a = elector(leases.api, 'a', events, 1, () => clock);
  a.start();
  await until(() => a.isLeader());
  return { a, leases, events, advance: (ms: number) => (clock += ms) };
}

describe('leader election on a Lease', () => {
  it('lets one replica of two lead, and the other take over when it leaves', async () => {
    const leases = memoryLeases();
    const events: string[] = [];
    const a = elector(leases.api, 'a', events);
    const b = elector(leases.api, 'b', events);
    a.start();
    await until(() => a.isLeader());
    b.start();
    // b reads a's renewals for a while and never leads.
    await until(() => events.length === 1 && leases.holder() === 'a');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(b.isLeader()).toBe(false);
    await a.stop();
    await until(() => b.isLeader());
    expect(events).toEqual(['a leads', 'a stops', 'b leads']);
  });

  it('stops leading when another holder takes the Lease, and leads again when it is free', async () => {
    const leases = memoryLeases();
    const events: string[] = [];
    const a = elector(leases.api, 'a', events);
    a.start();
    await until(() => a.isLeader());
    leases.setHolder('intruder');
    await until(() => !a.isLeader());
    leases.setHolder('');
    await until(() => a.isLeader());
    expect(events).toEqual(['a leads', 'a stops', 'a leads']);
  });

  it('stops leading once renewals have failed for longer than the renew deadline, not at the first failure', async () => {
    // The deadline is counted from the last renewal on the elector's own clock, which the test moves.
    const { a, leases, events, advance } = await leaderOnTestClock();
    leases.fail(true);
    await until(() => leases.failedCalls() >= 3);
    // Failed renewals alone do not end leadership while the clock is inside the deadline.
    expect(a.isLeader()).toBe(true);
    // The renew deadline is the duration minus one renewal interval: 1000 - 50 ms after the last renewal.
    advance(949);
    expect(a.isLeader()).toBe(true);
    advance(1);
    expect(a.isLeader()).toBe(false);
    await until(() => events.includes('a stops'));
    leases.fail(false);
    await until(() => a.isLeader());
    expect(events).toEqual(['a leads', 'a stops', 'a leads']);
  });

  it('stops leading by the renew deadline while the API server hangs, and tells the controller', async () => {
    const { a, leases, events, advance } = await leaderOnTestClock();
    leases.hang(true);
    // No call answers, none fails: leadership still ends at the deadline, and the deadline's timer says so.
    advance(950);
    expect(a.isLeader()).toBe(false);
    await until(() => events.includes('a stops'));
    expect(events).toEqual(['a leads', 'a stops']);
    leases.hang(false);
  });

  it('waits out a foreign holder that stopped renewing before it takes the Lease', async () => {
    const leases = memoryLeases();
    const events: string[] = [];
    const a = elector(leases.api, 'a', events, 1);
    a.start();
    await until(() => a.isLeader());
    await a.stop();
    leases.setHolder('crashed');
    const b = elector(leases.api, 'b', events, 1);
    const startedAt = Date.now();
    b.start();
    await until(() => b.isLeader());
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1000);
  });
});
