/**
 * Replays the requests of test/fixtures/*.json (answers of a real API server transcribed from public sources, each
 * naming its source) against the fake and compares the answers: status codes, Status reason/code/message/details,
 * watch event types and object shapes, and which metadata fields are present. Values a server picks (uids,
 * timestamps, resourceVersions) are compared by form, not by value.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeKubeApi } from '../src/index.ts';
import { startFakeKubeApi } from '../src/index.ts';
import type { Json } from './helpers.ts';
import { openWatch, raw } from './helpers.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = (name: string): Json => JSON.parse(readFileSync(path.join(here, 'fixtures', name), 'utf8'));

const RESOURCE_VERSION = /^[0-9]+$/;
const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const keys = (object: object) => Object.keys(object).sort();
const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });

let fake: FakeKubeApi | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('fixtures: list and watch (kubernetes/website api-concepts.md)', () => {
  const recorded = fixture('api-concepts-list-watch.json');

  it('answers a list as the PodList with the collection resourceVersion', async () => {
    fake = await startFakeKubeApi();
    await raw(fake, 'POST', '/api/v1/namespaces/test/pods', pod('a'));
    const answer = await raw(fake, recorded.list.request.method, recorded.list.request.path);
    expect(answer.status).toBe(recorded.list.response.status);
    expect(answer.headers.get('content-type')).toBe(recorded.list.response.headers['Content-Type']);
    expect({ kind: answer.body.kind, apiVersion: answer.body.apiVersion }).toEqual({ kind: recorded.list.response.body.kind, apiVersion: recorded.list.response.body.apiVersion });
    expect(keys(answer.body.metadata)).toEqual(keys(recorded.list.response.body.metadata));
    expect(answer.body.metadata.resourceVersion).toMatch(RESOURCE_VERSION);
  });

  it('streams a watch from a resourceVersion as chunked JSON events of the requested kind', async () => {
    fake = await startFakeKubeApi();
    const list = await raw(fake, 'GET', recorded.list.request.path);
    const watch = await openWatch(fake, recorded.watch.request.path.replace('10245', list.body.metadata.resourceVersion));
    await raw(fake, 'POST', '/api/v1/namespaces/test/pods', pod('a'));
    fake.setStatus('/api/v1/namespaces/test/pods/a', { phase: 'Running' });
    const events = await watch.next(2);
    watch.close();
    expect(watch.status).toBe(recorded.watch.response.status);
    expect(watch.headers.get('transfer-encoding')).toBe(recorded.watch.response.headers['Transfer-Encoding']);
    expect(watch.headers.get('content-type')).toBe(recorded.watch.response.headers['Content-Type']);
    expect(events.map((e) => e.type)).toEqual(recorded.watch.response.events.map((e: { type: string }) => e.type));
    for (const [index, event] of events.entries()) {
      const expected = recorded.watch.response.events[index].object;
      expect({ kind: event.object.kind, apiVersion: event.object.apiVersion }).toEqual({ kind: expected.kind, apiVersion: expected.apiVersion });
      expect(event.object.metadata.resourceVersion).toMatch(RESOURCE_VERSION);
    }
    expect(Number(events[1]!.object.metadata.resourceVersion)).toBeGreaterThan(Number(events[0]!.object.metadata.resourceVersion));
  });

  it('sends a BOOKMARK whose object is of the requested type with only resourceVersion set', async () => {
    fake = await startFakeKubeApi();
    const list = await raw(fake, 'GET', recorded.list.request.path);
    const watch = await openWatch(fake, recorded.bookmark.request.path.replace('10245', list.body.metadata.resourceVersion));
    await raw(fake, 'POST', '/api/v1/namespaces/test/pods', pod('a'));
    await watch.next(1);
    fake.bookmark();
    const events = await watch.next(2);
    watch.close();
    const expected = recorded.bookmark.response.events[1];
    expect(events.map((e) => e.type)).toEqual(recorded.bookmark.response.events.map((e: { type: string }) => e.type));
    expect(keys(events[1]!.object)).toEqual(keys(expected.object));
    expect(keys(events[1]!.object.metadata)).toEqual(keys(expected.object.metadata));
    expect({ kind: events[1]!.object.kind, apiVersion: events[1]!.object.apiVersion }).toEqual({ kind: expected.object.kind, apiVersion: expected.object.apiVersion });
  });

  it('keeps the resourceVersion of the first chunk on every page and ends without a continue token', async () => {
    fake = await startFakeKubeApi();
    for (const [namespace, name] of [['test', 'a'], ['test', 'b'], ['other', 'c'], ['other', 'd'], ['test', 'e']] as const) await raw(fake, 'POST', `/api/v1/namespaces/${namespace}/pods`, pod(name));
    const pages = [];
    let next = '/api/v1/pods?limit=2';
    for (;;) {
      const page = await raw(fake, 'GET', next);
      pages.push(page);
      // A write between pages must not show: the pages are one snapshot.
      await raw(fake, 'POST', '/api/v1/namespaces/test/pods', pod(`late-${pages.length}`));
      if (!page.body.metadata.continue) break;
      next = `/api/v1/pods?limit=2&continue=${encodeURIComponent(page.body.metadata.continue)}`;
    }
    expect(pages.length).toBe(recorded.chunks.responses.length);
    expect(new Set(pages.map((p) => p.body.metadata.resourceVersion)).size).toBe(1);
    expect(pages.map((p) => p.status)).toEqual(recorded.chunks.responses.map((r: { status: number }) => r.status));
    expect(pages.map((p) => p.body.kind)).toEqual(recorded.chunks.responses.map((r: { body: { kind: string } }) => r.body.kind));
    expect(pages.slice(0, -1).every((p) => typeof p.body.metadata.continue === 'string')).toBe(true);
    expect(pages.at(-1)!.body.metadata.continue ?? '').toBe(recorded.chunks.responses.at(-1).body.metadata.continue);
    expect(pages.flatMap((p) => p.body.items.map((i: { metadata: { name: string } }) => i.metadata.name))).toEqual(['c', 'd', 'a', 'b', 'e']);
  });
});

describe('fixtures: recorded answers kept by kubeclient (ManageIQ/kubeclient test/json)', () => {
  it('lists config maps with items that carry no kind or apiVersion, and the same metadata fields', async () => {
    const recorded = fixture('kubeclient-config-map-list.json');
    const item = recorded.response.body.items[0];
    fake = await startFakeKubeApi();
    await raw(fake, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: item.metadata.name }, data: item.data });
    const answer = await raw(fake, recorded.request.method, recorded.request.path);
    const withoutSelfLink = (metadata: object) => keys(metadata).filter((k) => k !== 'selfLink');
    expect(answer.status).toBe(recorded.response.status);
    expect({ kind: answer.body.kind, apiVersion: answer.body.apiVersion }).toEqual({ kind: recorded.response.body.kind, apiVersion: recorded.response.body.apiVersion });
    expect(keys(answer.body.metadata)).toEqual(withoutSelfLink(recorded.response.body.metadata));
    expect(keys(answer.body.items[0])).toEqual(keys(item));
    expect(keys(answer.body.items[0].metadata)).toEqual(withoutSelfLink(item.metadata));
    expect(answer.body.items[0].data).toEqual(item.data);
    expect(answer.body.items[0].metadata).toMatchObject({ name: item.metadata.name, namespace: item.metadata.namespace, uid: expect.stringMatching(UID), resourceVersion: expect.stringMatching(RESOURCE_VERSION), creationTimestamp: expect.stringMatching(TIMESTAMP) });
    expect(item.metadata.creationTimestamp).toMatch(TIMESTAMP);
  });

  it('answers a second create of the same name with the recorded AlreadyExists Status', async () => {
    const recorded = fixture('kubeclient-namespace-already-exists.json');
    fake = await startFakeKubeApi();
    expect((await raw(fake, recorded.request.method, recorded.request.path, recorded.request.body)).status).toBe(201);
    const answer = await raw(fake, recorded.request.method, recorded.request.path, recorded.request.body);
    expect(answer.status).toBe(recorded.response.status);
    expect(answer.body).toMatchObject(recorded.response.body);
    expect(answer.body).toEqual({ kind: 'Status', apiVersion: 'v1', ...recorded.response.body });
  });
});

describe('fixtures: cascading deletion (kubernetes/website use-cascading-deletion.md)', () => {
  const recorded = fixture('cascading-deletion.json');
  const deploymentPath = '/apis/apps/v1/namespaces/default/deployments/nginx-deployment';

  async function deploymentWithDependent() {
    fake = await startFakeKubeApi();
    const created = await raw(fake, 'POST', '/apis/apps/v1/namespaces/default/deployments', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nginx-deployment' }, spec: { replicas: 1 } });
    const reference = { ...recorded.ownerReference, apiVersion: 'apps/v1', kind: 'Deployment', name: 'nginx-deployment', uid: created.body.metadata.uid };
    await raw(fake, 'POST', '/api/v1/namespaces/default/pods', { ...pod('nginx'), metadata: { name: 'nginx', ownerReferences: [reference], finalizers: ['example.com/hold'] } });
    return { fake, created };
  }

  it('foreground: answers the owner marked for deletion with the foregroundDeletion finalizer, and keeps it while a blocking dependent remains', async () => {
    const { fake } = await deploymentWithDependent();
    const answer = await raw(fake, recorded.foreground.request.method, recorded.foreground.request.path, recorded.foreground.request.body);
    const expected = recorded.foreground.response.body;
    expect(answer.status).toBe(200);
    expect({ kind: answer.body.kind, apiVersion: answer.body.apiVersion }).toEqual({ kind: expected.kind, apiVersion: expected.apiVersion });
    expect(answer.body.metadata).toMatchObject({ name: expected.metadata.name, namespace: expected.metadata.namespace, finalizers: expected.metadata.finalizers, deletionTimestamp: expect.stringMatching(TIMESTAMP), uid: expect.stringMatching(UID) });
    for (const key of keys(expected.metadata)) expect(answer.body.metadata).toHaveProperty(key);
    expect(fake.get(deploymentPath)).toBeDefined();
    fake.mutate('/api/v1/namespaces/default/pods/nginx', (o) => delete o.metadata.finalizers);
    expect(fake.names()).toEqual([]);
  });

  it('background: answers a Status of Success naming the deleted object, and the dependent goes', async () => {
    const { fake, created } = await deploymentWithDependent();
    const answer = await raw(fake, recorded.background.request.method, recorded.background.request.path, recorded.background.request.body);
    const expected = recorded.background.response.body;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ kind: expected.kind, apiVersion: expected.apiVersion, status: expected.status, details: { ...expected.details, uid: created.body.metadata.uid } });
    expect(keys(answer.body.details)).toEqual(keys(expected.details));
    expect(fake.get(deploymentPath)).toBeUndefined();
    expect(fake.get('/api/v1/namespaces/default/pods/nginx')!.metadata.deletionTimestamp).toMatch(TIMESTAMP);
  });

  it('orphan: answers the owner with the orphan finalizer and a zero grace period, and the dependent stays without its reference', async () => {
    const { fake } = await deploymentWithDependent();
    const answer = await raw(fake, recorded.orphan.request.method, recorded.orphan.request.path, recorded.orphan.request.body);
    const expected = recorded.orphan.response.body;
    expect(answer.status).toBe(200);
    expect({ kind: answer.body.kind, apiVersion: answer.body.apiVersion }).toEqual({ kind: expected.kind, apiVersion: expected.apiVersion });
    expect(answer.body.metadata).toMatchObject({ namespace: expected.namespace, finalizers: expected.finalizers, deletionGracePeriodSeconds: expected.deletionGracePeriodSeconds, deletionTimestamp: expect.stringMatching(TIMESTAMP) });
    expect(fake.get(deploymentPath)).toBeUndefined();
    expect(fake.get('/api/v1/namespaces/default/pods/nginx')!.metadata.ownerReferences).toBeUndefined();
  });
});

describe('fixtures: Status answers as kube-apiserver builds them (source code, not recordings)', () => {
  it('ends a watch from a compacted resourceVersion with one ERROR event carrying the 410 Expired Status, on HTTP 200', async () => {
    const recorded = fixture('watch-too-old.json');
    fake = await startFakeKubeApi({ watchWindow: 1 });
    for (const name of ['a', 'b', 'c']) await raw(fake, 'POST', '/api/v1/namespaces/default/pods', pod(name));
    const watch = await openWatch(fake, recorded.request.path);
    await watch.ended;
    expect(watch.status).toBe(recorded.response.status);
    expect(watch.events).toEqual(recorded.response.events);
  });

  it('answers NotFound, AlreadyExists and Conflict with the Status objects the source builds', async () => {
    const recorded = fixture('status-errors.json').answers;
    fake = await startFakeKubeApi();
    const leases = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    const missing = await raw(fake, 'GET', `${leases}/missing`);
    expect([missing.status, missing.body]).toEqual([recorded.notFound.status, recorded.notFound.body]);
    const first = await raw(fake, 'POST', leases, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'holder' }, spec: { holderIdentity: 'a' } });
    const again = await raw(fake, 'POST', leases, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'holder' }, spec: {} });
    expect([again.status, again.body]).toEqual([recorded.alreadyExists.status, recorded.alreadyExists.body]);
    await raw(fake, 'PUT', `${leases}/holder`, { ...first.body, spec: { holderIdentity: 'b' } });
    const stale = await raw(fake, 'PUT', `${leases}/holder`, { ...first.body, spec: { holderIdentity: 'c' } });
    expect([stale.status, stale.body]).toEqual([recorded.conflict.status, recorded.conflict.body]);
    const settings = await raw(fake, 'POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } });
    await raw(fake, 'PUT', '/api/v1/namespaces/default/configmaps/settings', { ...settings.body, data: { a: '2' } });
    const staleCore = await raw(fake, 'PUT', '/api/v1/namespaces/default/configmaps/settings', { ...settings.body, data: { a: '3' } });
    expect([staleCore.status, staleCore.body]).toEqual([recorded.conflictCore.status, recorded.conflictCore.body]);
  });
});

describe('fixtures: custom resources against their schema (kubernetes/website custom-resource-definitions.md)', () => {
  const recorded = fixture('crd-pruning-validation.json');

  it('prunes a field the schema does not name, and answers the metadata fields the example shows', async () => {
    fake = await startFakeKubeApi({ crds: [recorded.crd] });
    const answer = await raw(fake, recorded.pruning.request.method, recorded.pruning.request.path, recorded.pruning.request.body);
    const expected = recorded.pruning.response.body;
    expect(answer.status).toBe(201);
    expect(answer.body.spec).toEqual(expected.spec);
    expect({ kind: answer.body.kind, apiVersion: answer.body.apiVersion }).toEqual({ kind: expected.kind, apiVersion: expected.apiVersion });
    expect(keys(answer.body.metadata)).toEqual(keys(expected.metadata));
    expect(answer.body.metadata).toMatchObject({ name: expected.metadata.name, namespace: expected.metadata.namespace, generation: expected.metadata.generation, uid: expect.stringMatching(UID) });
  });

  it('refuses a body the schema refuses, with one cause per documented failure', async () => {
    fake = await startFakeKubeApi({ crds: [recorded.crd] });
    const answer = await raw(fake, recorded.validation.request.method, recorded.validation.request.path, recorded.validation.request.body);
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ kind: 'Status', reason: 'Invalid', details: { name: 'my-new-cron-object', kind: 'CronTab' } });
    const causes = answer.body.details.causes.map((c: { message: string }) => c.message);
    expect(causes).toHaveLength(recorded.validation.response.failures.length);
    for (const failure of recorded.validation.response.failures) expect(causes.filter((m: string) => m.endsWith(failure))).toHaveLength(1);
    expect(fake.list('/apis/stable.example.com/v1/namespaces/default/crontabs')).toEqual([]);
  });
});
