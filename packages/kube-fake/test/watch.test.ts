import { CustomObjectsApi, makeInformer, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeKubeApi } from '../src/index.ts';
import { startFakeKubeApi } from '../src/index.ts';
import { GROUP, NS, openWatch, projectCrds, raw, targetSpec, targetsPath, VERSION } from './helpers.ts';

let fake: FakeKubeApi | undefined;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await fake?.close();
  fake = undefined;
});

async function setup(options: { watchWindow?: number } = {}) {
  fake = await startFakeKubeApi({ crds: projectCrds(), ...options });
  const custom = fake.kubeConfig().makeApiClient(CustomObjectsApi);
  const target = { group: GROUP, version: VERSION, namespace: NS, plural: 'backuptargets' };
  const create = (name: string, labels: Record<string, string> = {}) => custom.createNamespacedCustomObject({ ...target, body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'BackupTarget', metadata: { name, labels }, spec: targetSpec() } });
  return { fake, custom, target, create };
}

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

describe('kube-fake: watch', () => {
  it('streams from a resourceVersion: ADDED, MODIFIED, DELETED with the revision of each change, kept open', async () => {
    const { fake, custom, target, create } = await setup();
    const first = await create('a');
    const watch = await openWatch(fake, `${targetsPath}?watch=true&resourceVersion=${first.metadata.resourceVersion}`);
    expect(watch.status).toBe(200);
    expect(watch.headers.get('transfer-encoding')).toBe('chunked');
    await create('b');
    await custom.patchNamespacedCustomObject({ ...target, name: 'a', body: { spec: { engine: 'mysql' } } }, merge);
    await custom.deleteNamespacedCustomObject({ ...target, name: 'b' });
    const events = await watch.next(3);
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED b', 'MODIFIED a', 'DELETED b']);
    expect(events.map((e) => Number(e.object.metadata.resourceVersion))).toEqual([fake.revision - 2, fake.revision - 1, fake.revision]);
    expect(events[0]!.object).toMatchObject({ apiVersion: `${GROUP}/${VERSION}`, kind: 'BackupTarget' });
    watch.close();
  });

  it('starts without a resourceVersion with one ADDED per object, filters by label, and sends bookmarks when allowed', async () => {
    const { fake, create, custom, target } = await setup();
    await create('a', { tier: 'gold' });
    await create('b', { tier: 'silver' });
    const watch = await openWatch(fake, `${targetsPath}?watch=1&labelSelector=tier%3Dgold&allowWatchBookmarks=true`);
    expect((await watch.next(1)).map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED a']);
    // Leaving the selection is a DELETED for this watch; entering it an ADDED.
    await custom.patchNamespacedCustomObject({ ...target, name: 'a', body: { metadata: { labels: { tier: 'bronze' } } } }, merge);
    await custom.patchNamespacedCustomObject({ ...target, name: 'b', body: { metadata: { labels: { tier: 'gold' } } } }, merge);
    fake.bookmark();
    const events = await watch.next(4);
    expect(events.slice(1).map((e) => `${e.type} ${e.object.metadata.name ?? ''}`)).toEqual(['DELETED a', 'ADDED b', 'BOOKMARK ']);
    expect(events[3]!.object).toEqual({ kind: 'BackupTarget', apiVersion: `${GROUP}/${VERSION}`, metadata: { resourceVersion: String(fake.revision) } });
    watch.close();
  });

  it('ends a watch from an expired resourceVersion with a 410 ERROR event, and open watches when the history expires', async () => {
    const { fake, create } = await setup();
    const first = await create('a');
    const open = await openWatch(fake, `${targetsPath}?watch=true&resourceVersion=${first.metadata.resourceVersion}`);
    fake.expireHistory();
    await open.ended;
    expect(open.events).toEqual([{ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${first.metadata.resourceVersion} (${fake.revision})`, reason: 'Expired', code: 410 } }]);
    const late = await openWatch(fake, `${targetsPath}?watch=true&resourceVersion=${first.metadata.resourceVersion}`);
    await late.ended;
    expect(late.status).toBe(200);
    expect(late.events.map((e) => [e.type, e.object.code, e.object.reason])).toEqual([['ERROR', 410, 'Expired']]);
    // A list answers the newest state, from which a watch is valid again.
    const list = await raw(fake, 'GET', targetsPath);
    const again = await openWatch(fake, `${targetsPath}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`);
    await create('b');
    expect((await again.next(1)).map((e) => e.type)).toEqual(['ADDED']);
    again.close();
    expect((await raw(fake, 'GET', `${targetsPath}?resourceVersion=${first.metadata.resourceVersion}&resourceVersionMatch=Exact`)).body).toMatchObject({ code: 410, reason: 'Expired' });
  });

  it('answers 410 for a watch more than watchWindow versions behind', async () => {
    const { fake, create } = await setup({ watchWindow: 2 });
    const first = await create('a');
    await create('b');
    await create('c');
    await create('d');
    const watch = await openWatch(fake, `${targetsPath}?watch=true&resourceVersion=${first.metadata.resourceVersion}`);
    await watch.ended;
    expect(watch.events[0]).toMatchObject({ type: 'ERROR', object: { code: 410, message: `too old resource version: ${first.metadata.resourceVersion} (${fake.revision - 2})` } });
  });

  it('serves the client library\'s Watch until it aborts', async () => {
    const { fake, create } = await setup();
    const seen: string[] = [];
    let done: unknown = 'open';
    const controller = await new Watch(fake.kubeConfig()).watch(targetsPath, { resourceVersion: String(fake.revision) }, (type, object: KubernetesObject) => seen.push(`${type} ${object.metadata?.name}`), (error) => (done = error));
    await create('a');
    await fake.waitForObject(`${targetsPath}/a`, (o) => o !== undefined);
    while (seen.length < 1) await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['ADDED a']);
    expect(done).toBe('open');
    controller.abort();
  });
});

describe('kube-fake: the client library\'s informer', () => {
  it('lists, then watches from the list\'s resourceVersion; after a 410 it lists again and keeps its cache right', async () => {
    const { fake, custom, target, create } = await setup();
    await create('a');
    const informer = makeInformer<KubernetesObject>(fake.kubeConfig(), targetsPath, () => custom.listNamespacedCustomObject({ ...target }) as never);
    const added: string[] = [];
    const deleted: string[] = [];
    informer.on('add', (o) => added.push(o.metadata!.name!));
    informer.on('delete', (o) => deleted.push(o.metadata!.name!));
    informer.on('error', () => {});
    await informer.start();
    cleanups.push(() => informer.stop());
    const watchCall = await fake.waitForCall((c) => c.method === 'GET' && c.query.includes('watch=true'));
    expect(new URLSearchParams(watchCall.query).get('resourceVersion')).toBe(String(fake.revision));
    expect(added).toEqual(['a']);

    await create('b');
    await fake.waitForObject(`${targetsPath}/b`, (o) => o !== undefined);
    const mark = fake.calls.length;
    fake.expireHistory();
    // While the informer is between its watches, 'a' goes: the re-list tells it.
    await custom.deleteNamespacedCustomObject({ ...target, name: 'a' });
    await fake.waitForCall((c) => c.method === 'GET' && c.query.includes('watch=true'), mark);
    await create('c');
    await waitUntil(() => informer.list().length === 2 && added.includes('c'));
    expect(informer.list().map((o) => o.metadata!.name).sort()).toEqual(['b', 'c']);
    expect(deleted).toEqual(['a']);
    const after = fake.calls.slice(mark).map((c) => `${c.method} ${c.query.includes('watch=true') ? 'watch' : 'list'}`);
    expect(after.filter((c) => c === 'GET list').length).toBeGreaterThanOrEqual(1);
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
