import { startFakeKubeApi, type FakeKubeApi } from '@sigil/kube-fake';
import { createLogger } from '@sigil/kit/log';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog } from '../src/catalog.ts';
import { createController, type Controller } from '../src/controller.ts';
import type { CustomResource } from '../src/documents.ts';
import { FINALIZER, kindInfo } from '../src/kinds.ts';
import { createCustomObjects } from '../src/kube.ts';
import { startFakeCatalog, type FakeCatalog } from './fake-catalog.ts';
import { isReady, kubectl, loadCrds, objectPath, setLeaseHolder, until } from './helpers.ts';

const NS = 'default';
const LEASE = { namespace: 'strata', name: 'strata-controller', durationSeconds: 2 };
const recipient = `age1${'q'.repeat(58)}`;
const store = (name: string) => ({
  apiVersion: 'backups.strata.dev/v1alpha1',
  kind: 'BackupStore',
  metadata: { name, namespace: NS, labels: { team: 'platform' } },
  spec: { s3: { endpoint: 'http://127.0.0.1:9', region: 'us-east-1', bucket: name, credentialsSecret: { name: 's3' } }, encryption: { ageRecipients: [recipient], identitySecret: { name: 'age' } } },
});
const policy = (name: string, storeName: string) => ({ apiVersion: 'backups.strata.dev/v1alpha1', kind: 'BackupPolicy', metadata: { name, namespace: NS }, spec: { store: storeName, full: { schedule: '0 3 * * *' } } });
const target = (name: string, policyName: string) => ({
  apiVersion: 'backups.strata.dev/v1alpha1',
  kind: 'BackupTarget',
  metadata: { name, namespace: NS },
  spec: { engine: 'postgres', endpoint: { host: 'db.example', port: 5432 }, credentials: { secretRef: { name: 'pg' } }, policy: policyName },
});

let fake: FakeKubeApi;
let catalog: FakeCatalog;
let controller: Controller | undefined;
const log = createLogger('strata-controller-test', process.env.TEST_LOG_LEVEL ?? 'silent');

beforeAll(async () => {
  fake = await startFakeKubeApi({ crds: loadCrds() });
  catalog = await startFakeCatalog();
});
afterAll(async () => {
  await controller?.stop();
  await fake?.close();
  await catalog?.close();
});
afterEach(async () => {
  await controller?.stop();
  controller = undefined;
});

function startController(identity = 'controller-0', send: typeof fetch = fetch): Controller {
  const started = createController({
    kubeConfig: fake.kubeConfig(),
    catalog: createCatalog({ url: catalog.url, token: catalog.token, fetch: send }),
    namespaces: [NS],
    lease: { ...LEASE, identity, renewMs: 100 },
    backoff: { baseMs: 50, maxMs: 400 },
    resyncMs: 60_000,
    log,
  });
  started.start();
  return started;
}

const stored = (kind: string, name: string) => fake.get(objectPath(kind, NS, name)) as CustomResource | undefined;
const waitReady = (kind: string, name: string) => until(`${kind} ${name} Ready`, () => stored(kind, name), isReady);
const statusWrites = (from: number) => fake.calls.slice(from).filter((c) => c.method === 'PUT' && c.path.endsWith('/status'));

describe('the controller against the fake API server', () => {
  it('brings resources applied in any order to Ready, retrying what depends on what is missing', async () => {
    controller = startController();
    const k = kubectl(fake.kubeConfig());
    // Dependents first: the target and the policy are NotReady until the store and policy exist.
    await k.create(target('orders', 'nightly'));
    const notReady = await until('target NotReady', () => stored('BackupTarget', 'orders'), (o) => o?.status?.conditions?.[0]?.reason === 'PolicyNotFound');
    expect(notReady?.status).toMatchObject({ phase: 'NotReady', observedGeneration: 1 });
    await k.create(policy('nightly', 'local'));
    await k.create(store('local'));
    for (const [kind, name] of [['BackupStore', 'local'], ['BackupPolicy', 'nightly'], ['BackupTarget', 'orders']] as const) {
      const ready = await waitReady(kind, name);
      expect(ready?.metadata.finalizers).toEqual([FINALIZER]);
    }
    // The catalog got the document kubectl holds, without the server's fields.
    expect(catalog.stored.get('BackupStore/default/local')).toMatchObject({ metadata: { name: 'local', namespace: NS, labels: { team: 'platform' } }, spec: store('local').spec });
    expect(Object.keys(catalog.stored.get('BackupStore/default/local')?.metadata ?? {}).sort()).toEqual(['generation', 'labels', 'name', 'namespace']);

    // A new generation is applied again and observed.
    await k.setSpec('BackupPolicy', NS, 'nightly', { store: 'local', full: { schedule: '0 4 * * *' } });
    const changed = await until('policy generation 2 Ready', () => stored('BackupPolicy', 'nightly'), (o) => o?.metadata.generation === 2 && isReady(o));
    expect(changed?.status?.observedGeneration).toBe(2);
    expect(catalog.stored.get('BackupPolicy/default/nightly')?.spec).toMatchObject({ full: { schedule: '0 4 * * *' } });
  });

  it("writes the catalog's error into Ready and backs off until the catalog accepts the document", async () => {
    controller = startController();
    await controller.leading(true);
    const from = fake.calls.length;
    const requestsFrom = catalog.requests.length;
    catalog.failNext((r) => r === 'POST BackupStore/default/flaky', 3, 503, 'the catalog database is unavailable');
    await kubectl(fake.kubeConfig()).create(store('flaky'));
    await waitReady('BackupStore', 'flaky');
    const failed = statusWrites(from).filter((c) => c.path.endsWith('/backupstores/flaky/status')).map((c) => (c.body as CustomResource).status?.conditions?.find((x) => x.type === 'Ready'));
    expect(failed[0]).toMatchObject({ status: 'False', reason: 'ApplyFailed', message: 'the catalog database is unavailable', observedGeneration: 1 });
    // Three refusals, then the apply that worked: four POSTs, not a tight loop.
    expect(catalog.requests.slice(requestsFrom).filter((r) => r === 'POST BackupStore/default/flaky')).toHaveLength(4);
    // Each retry waited out its back-off (at least half of 50, 100, 200 ms), the first one too: the event of the
    // controller's own finalizer write, which arrives while the first attempt runs, does not run it again at once.
    const postTimes = catalog.requests.flatMap((r, i) => (i >= requestsFrom && r === 'POST BackupStore/default/flaky' ? [catalog.requestTimes[i] as number] : []));
    const gaps = postTimes.slice(1).map((at, i) => at - (postTimes[i] as number));
    expect(gaps.map((gap, i) => gap >= [25, 50, 100][i]! - 2)).toEqual([true, true, true]);
  });

  it('re-reads and retries a status write that lost a resourceVersion race (409)', async () => {
    const objects = createCustomObjects(fake.kubeConfig());
    const info = kindInfo('BackupStore');
    await kubectl(fake.kubeConfig()).create(store('raced'));
    const stale = (await objects.get(info, NS, 'raced')) as CustomResource;
    // Someone else writes in between: the resourceVersion the controller read is no longer current.
    await kubectl(fake.kubeConfig()).setSpec('BackupStore', NS, 'raced', { ...store('raced').spec, prefix: 'p/' });
    const from = fake.calls.length;
    const written = await objects.update(info, stale, (current) => ({ ...current, status: { phase: 'Pending', observedGeneration: current.metadata.generation } }), 'status');
    const puts = fake.calls.slice(from).filter((c) => c.method === 'PUT');
    expect(puts.map((c) => c.status)).toEqual([409, 200]);
    expect(written?.status).toEqual({ phase: 'Pending', observedGeneration: 2 });
  });

  it('keeps reconciling after the watch history expired (410 Gone: the informers list again)', async () => {
    controller = startController();
    await kubectl(fake.kubeConfig()).create(store('before-expiry'));
    await waitReady('BackupStore', 'before-expiry');
    const from = fake.calls.length;
    fake.expireHistory();
    // The informers list again from scratch…
    await fake.waitForCall((c) => c.method === 'GET' && c.path.endsWith('/backupstores') && !c.query.includes('watch='), from);
    // …and what is created or changed afterwards is still reconciled.
    await kubectl(fake.kubeConfig()).create(store('after-expiry'));
    await waitReady('BackupStore', 'after-expiry');
    await kubectl(fake.kubeConfig()).setSpec('BackupStore', NS, 'before-expiry', { ...store('before-expiry').spec, prefix: 'after/' });
    await until('changed store Ready', () => stored('BackupStore', 'before-expiry'), (o) => o?.metadata.generation === 2 && isReady(o));
  });

  it('deletes from the catalog before it removes the finalizer, and keeps the finalizer while the catalog refuses', async () => {
    controller = startController();
    const k = kubectl(fake.kubeConfig());
    await k.create(store('s-del'));
    await k.create(policy('p-del', 's-del'));
    await k.create(target('t-del', 'p-del'));
    await waitReady('BackupTarget', 't-del');
    const inCatalogWhenFinalizerRemoved: boolean[] = [];
    fake.onRequest((call) => {
      const body = call.body as CustomResource | undefined;
      if (call.method === 'PUT' && call.path.endsWith('/backuptargets/t-del') && body?.metadata?.deletionTimestamp && !body.metadata.finalizers?.includes(FINALIZER)) {
        inCatalogWhenFinalizerRemoved.push(catalog.stored.has('BackupTarget/default/t-del'));
      }
    });
    catalog.failNext((r) => r === 'DELETE BackupTarget/default/t-del', 2, 409, 'Target default/t-del has a backup in progress; wait for it to finish.');
    const from = fake.calls.length;
    await k.delete('BackupTarget', NS, 't-del');
    // While the catalog refuses, the object keeps the finalizer and says why.
    const refused = (await fake.waitForCall((c) => c.method === 'PUT' && c.path.endsWith('/backuptargets/t-del/status') && c.status === 200, from)).body as CustomResource;
    expect(refused.metadata.finalizers).toContain(FINALIZER);
    expect(refused.metadata.deletionTimestamp).toBeTruthy();
    expect(refused.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'DeleteFailed', message: expect.stringMatching(/backup in progress/) });
    await until('target gone', () => stored('BackupTarget', 't-del'), (o) => o === undefined);
    expect(inCatalogWhenFinalizerRemoved).toEqual([false]);
    expect(catalog.requests.filter((r) => r === 'DELETE BackupTarget/default/t-del')).toHaveLength(3);
  });

  it('stops writing when another holder takes its Lease, and resumes when the Lease is free', async () => {
    controller = startController('controller-a');
    await controller.leading(true);
    // The catch-up of everything earlier tests left behind is over: whatever reaches the catalog now is new.
    await until('informers listed', () => controller?.synced(), Boolean);
    await controller.idle();
    await setLeaseHolder(fake.kubeConfig(), LEASE.namespace, LEASE.name, 'controller-b', 30);
    await controller.leading(false);
    const from = fake.calls.length;
    const requestsFrom = catalog.requests.length;
    await kubectl(fake.kubeConfig()).create(store('while-lost'));
    // Several renew periods without the Lease: nothing reaches the catalog, no status is written.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(catalog.requests.slice(requestsFrom)).toEqual([]);
    expect(statusWrites(from)).toEqual([]);
    expect(stored('BackupStore', 'while-lost')?.status).toBeUndefined();
    // The other holder gives it up (client-go's release: no holder): this replica leads again and catches up.
    await setLeaseHolder(fake.kubeConfig(), LEASE.namespace, LEASE.name, '', 1);
    await controller.leading(true);
    await waitReady('BackupStore', 'while-lost');
    // The catch-up reads what the catalog already has for the observed generation; it does not apply it again.
    await controller.idle();
    const caughtUp = catalog.requests.slice(requestsFrom);
    expect(caughtUp).toContain('GET BackupStore/default/local');
    expect(caughtUp).not.toContain('POST BackupStore/default/local');
  });

  it('aborts a catalog call in flight when it loses the Lease, and writes nothing after', async () => {
    controller = startController('controller-a');
    await controller.leading(true);
    await until('informers listed', () => controller?.synced(), Boolean);
    await controller.idle();
    const release = catalog.hold((r) => r === 'POST BackupStore/default/held-at-loss');
    await kubectl(fake.kubeConfig()).create(store('held-at-loss'));
    await until('the apply is in flight', () => catalog.requests.includes('POST BackupStore/default/held-at-loss'), Boolean);
    await setLeaseHolder(fake.kubeConfig(), LEASE.namespace, LEASE.name, 'controller-b', 30);
    await controller.leading(false);
    const from = fake.calls.length;
    // The catalog never answers: only the end of the leadership term ends the call (the catalog timeout is 60 s).
    await until('the apply aborted', () => catalog.aborted.includes('POST BackupStore/default/held-at-loss'), Boolean);
    // Stopping waits for that reconcile to end; it wrote nothing once the Lease was gone.
    await controller.stop();
    expect(statusWrites(from)).toEqual([]);
    expect(catalog.stored.has('BackupStore/default/held-at-loss')).toBe(false);
    release();
    await setLeaseHolder(fake.kubeConfig(), LEASE.namespace, LEASE.name, '', 1);
  });

  it('on stop, ends the work in flight before it releases the Lease', async () => {
    // When the controller's own call to the catalog settles (the server may notice the abort later).
    let applyEnded = false;
    const send: typeof fetch = (input, init) => {
      const call = fetch(input, init);
      if (init?.method === 'POST' && String(init.body).includes('"held-at-stop"')) void call.finally(() => (applyEnded = true)).catch(() => undefined);
      return call;
    };
    controller = startController('controller-a', send);
    await controller.leading(true);
    await until('informers listed', () => controller?.synced(), Boolean);
    await controller.idle();
    const release = catalog.hold((r) => r === 'POST BackupStore/default/held-at-stop');
    await kubectl(fake.kubeConfig()).create(store('held-at-stop'));
    await until('the apply is in flight', () => catalog.requests.includes('POST BackupStore/default/held-at-stop'), Boolean);
    const order: string[] = [];
    fake.onRequest((call) => {
      const body = call.body as { spec?: { holderIdentity?: string } } | undefined;
      if (call.method === 'PUT' && call.path.endsWith(`/leases/${LEASE.name}`) && body?.spec?.holderIdentity === '') {
        order.push(applyEnded ? 'released after the apply ended' : 'released while the apply ran');
      }
    });
    const from = fake.calls.length;
    await controller.stop();
    expect(order).toEqual(['released after the apply ended']);
    expect(statusWrites(from).filter((c) => c.path.includes('held-at-stop'))).toEqual([]);
    release();
  });

  it('applies again what the catalog lost or holds differently (found at a resync or a new leader)', async () => {
    catalog.stored.delete('BackupPolicy/default/nightly');
    const store = catalog.stored.get('BackupStore/default/local');
    if (store) store.spec = { ...store.spec, prefix: 'changed-behind-its-back/' };
    const requestsFrom = catalog.requests.length;
    controller = startController();
    await until('re-applied', () => catalog.stored.get('BackupPolicy/default/nightly')?.spec, (spec) => spec !== undefined);
    await until('store spec restored', () => catalog.stored.get('BackupStore/default/local')?.spec, (spec) => spec?.prefix === undefined);
    expect(catalog.requests.slice(requestsFrom)).toEqual(expect.arrayContaining(['POST BackupPolicy/default/nightly', 'POST BackupStore/default/local']));
  });

  it("reports the catalog's refusal of a kind it does not apply, without a finalizer", async () => {
    controller = startController();
    await kubectl(fake.kubeConfig()).create({ apiVersion: 'backups.strata.dev/v1alpha1', kind: 'Sandbox', metadata: { name: 'scratch', namespace: NS }, spec: { engine: 'postgres' } });
    const refused = await until('sandbox status', () => stored('Sandbox', 'scratch'), (o) => o?.status?.conditions?.[0]?.reason === 'Unprocessable');
    expect(refused?.status).toMatchObject({ phase: 'NotReady', observedGeneration: 1, conditions: [{ type: 'Ready', status: 'False', message: expect.stringMatching(/not applied/) }] });
    expect(refused?.metadata.finalizers ?? []).toEqual([]);
  });
});
