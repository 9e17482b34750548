import { CoordinationV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { Json } from './helpers.ts';
import { fakeForEachTest, GROUP, NS, raw, rejection, targetSpec, targetsPath, VERSION } from './helpers.ts';

const setup = fakeForEachTest();

const targetBody = (name: string, spec: object = targetSpec()) => ({ apiVersion: `${GROUP}/${VERSION}`, kind: 'BackupTarget', metadata: { name, labels: { tier: 'gold' } }, spec, status: { phase: 'Forged' } });

describe('kube-fake: create, get and the Status answers', () => {
  it('stores a custom resource with the server-set metadata and without the status it was sent', async () => {
    const { fake, custom, target } = await setup();
    const created = await custom.createNamespacedCustomObject({ ...target, body: targetBody('main') });
    expect(created).toMatchObject({ apiVersion: `${GROUP}/${VERSION}`, kind: 'BackupTarget', metadata: { name: 'main', namespace: NS, generation: 1, labels: { tier: 'gold' } }, spec: { engine: 'postgres' } });
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.resourceVersion).toMatch(/^[0-9]+$/);
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(created.status).toBeUndefined();
    expect(await custom.getNamespacedCustomObject({ ...target, name: 'main' })).toEqual(created);
    expect(fake.get(`${targetsPath}/main`)).toEqual(created);
    expect(fake.calls.map((c) => `${c.method} ${c.path} ${c.status}`)).toEqual([`POST ${targetsPath} 201`, `GET ${targetsPath}/main 200`]);
  });

  it('answers 409 AlreadyExists and 404 NotFound Status objects named like the API server names them', async () => {
    const { fake, custom, target } = await setup();
    await custom.createNamespacedCustomObject({ ...target, body: targetBody('main') });
    expect(await rejection(custom.createNamespacedCustomObject({ ...target, body: targetBody('main') }))).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `backuptargets.${GROUP} "main" already exists`, reason: 'AlreadyExists',
      details: { name: 'main', group: GROUP, kind: 'backuptargets' }, code: 409,
    });
    expect(await rejection(custom.getNamespacedCustomObject({ ...target, name: 'nope' }))).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `backuptargets.${GROUP} "nope" not found`, reason: 'NotFound',
      details: { name: 'nope', group: GROUP, kind: 'backuptargets' }, code: 404,
    });
    const core = fake.kubeConfig().makeApiClient(CoreV1Api);
    expect(await rejection(core.readNamespacedPod({ namespace: NS, name: 'p' }))).toMatchObject({ message: 'pods "p" not found', details: { name: 'p', kind: 'pods' }, code: 404 });
    expect((await raw(fake, 'GET', '/apis/nothing.example/v1/things')).body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 });
  });

  it('refuses a request without the token with 401, and names that are not DNS subdomains with 422', async () => {
    const { fake } = await setup();
    expect(await raw(fake, 'GET', targetsPath, undefined, { authorization: 'Bearer wrong' })).toMatchObject({ status: 401, body: { reason: 'Unauthorized', code: 401, message: 'Unauthorized' } });
    const bad = await raw(fake, 'POST', targetsPath, targetBody('Main_1'));
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ reason: 'Invalid', code: 422, details: { name: 'Main_1', group: GROUP, kind: 'BackupTarget', causes: [{ reason: 'FieldValueInvalid', field: 'metadata.name' }] } });
    expect(bad.body.message).toMatch(/^BackupTarget\.backups\.strata\.dev "Main_1" is invalid: metadata\.name: Invalid value: "Main_1": a lowercase RFC 1123 subdomain/);
    expect(await raw(fake, 'POST', targetsPath, { ...targetBody('x'), metadata: { name: 'x', resourceVersion: '5' } })).toMatchObject({ status: 400, body: { reason: 'BadRequest', message: 'resourceVersion should not be set on objects to be created' } });
    const generated = await raw(fake, 'POST', targetsPath, { ...targetBody(''), metadata: { generateName: 'auto-' } });
    expect(generated.body.metadata.name).toMatch(/^auto-[a-z0-9]{5}$/);
  });
});

describe('kube-fake: updates, optimistic concurrency and the status subresource', () => {
  it('answers 409 Conflict for a stale resourceVersion and 422 for an update without one', async () => {
    const { custom, target } = await setup();
    const created = await custom.createNamespacedCustomObject({ ...target, body: targetBody('main') });
    const updated = await custom.replaceNamespacedCustomObject({ ...target, name: 'main', body: { ...created, spec: targetSpec({ engine: 'mysql' }) } });
    expect(Number(updated.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    expect(await rejection(custom.replaceNamespacedCustomObject({ ...target, name: 'main', body: { ...created, spec: targetSpec({ engine: 'mongodb' }) } }))).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: `Operation cannot be fulfilled on backuptargets.${GROUP} "main": the object has been modified; please apply your changes to the latest version and try again`,
      reason: 'Conflict', details: { name: 'main', group: GROUP, kind: 'backuptargets' }, code: 409,
    });
    const withoutVersion = { ...updated, metadata: { ...updated.metadata, resourceVersion: undefined } };
    expect(await rejection(custom.replaceNamespacedCustomObject({ ...target, name: 'main', body: withoutVersion }))).toMatchObject({
      code: 422, reason: 'Invalid', message: `backuptargets.${GROUP} "main" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update`,
      details: { name: 'main', group: GROUP, kind: 'backuptargets', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }] },
    });
  });

  it('bumps generation for spec changes only, ignores status on the main resource, and writes only status through /status', async () => {
    const { fake, custom, target } = await setup();
    const created = await custom.createNamespacedCustomObject({ ...target, body: targetBody('main') });
    const relabelled = await custom.replaceNamespacedCustomObject({ ...target, name: 'main', body: { ...created, metadata: { ...created.metadata, labels: { tier: 'silver' } }, status: { phase: 'Ignored' } } });
    expect(relabelled.metadata.generation).toBe(1);
    expect(relabelled.status).toBeUndefined();
    const respecced = await custom.replaceNamespacedCustomObject({ ...target, name: 'main', body: { ...relabelled, spec: targetSpec({ engine: 'mysql' }) } });
    expect(respecced.metadata.generation).toBe(2);
    const withStatus = await custom.replaceNamespacedCustomObjectStatus({ ...target, name: 'main', body: { ...respecced, spec: targetSpec({ engine: 'mongodb' }), status: { phase: 'Ready', observedGeneration: 2 } } });
    expect(withStatus).toMatchObject({ spec: { engine: 'mysql' }, status: { phase: 'Ready', observedGeneration: 2 }, metadata: { generation: 2 } });
    // An update that changes nothing writes nothing: same resourceVersion, no event.
    const revision = fake.revision;
    const same = await custom.replaceNamespacedCustomObject({ ...target, name: 'main', body: withStatus });
    expect(same.metadata.resourceVersion).toBe(withStatus.metadata.resourceVersion);
    expect(fake.revision).toBe(revision);
  });

  it('applies JSON patches, merge patches and status patches, and refuses strategic merge on a custom resource (415)', async () => {
    const { custom, target } = await setup();
    const created = await custom.createNamespacedCustomObject({ ...target, body: targetBody('main', targetSpec({ mask: ['public.users.email'] })) });
    const jsonPatched = await custom.patchNamespacedCustomObject({ ...target, name: 'main', body: [{ op: 'replace', path: '/spec/engine', value: 'mysql' }, { op: 'add', path: '/metadata/finalizers', value: ['backups.strata.dev/slot'] }] });
    expect(jsonPatched).toMatchObject({ spec: { engine: 'mysql', mask: ['public.users.email'] }, metadata: { generation: 2, finalizers: ['backups.strata.dev/slot'] } });
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const merged = await custom.patchNamespacedCustomObject({ ...target, name: 'main', body: { spec: { mask: null, endpoint: { port: 5433 } } } }, merge);
    expect(merged.spec).toMatchObject({ engine: 'mysql', endpoint: { host: 'db.example', port: 5433 } });
    expect(merged.spec.mask).toBeUndefined();
    const statusPatched = await custom.patchNamespacedCustomObjectStatus({ ...target, name: 'main', body: { status: { phase: 'Ready' }, spec: { engine: 'mongodb' } } }, merge);
    expect(statusPatched).toMatchObject({ spec: { engine: 'mysql' }, status: { phase: 'Ready' }, metadata: { generation: 3 } });
    // A patch carrying a stale resourceVersion is a conditional write.
    expect(await rejection(custom.patchNamespacedCustomObject({ ...target, name: 'main', body: { metadata: { resourceVersion: created.metadata.resourceVersion }, spec: { policy: 'weekly' } } }, merge))).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(await rejection(custom.patchNamespacedCustomObject({ ...target, name: 'main', body: { spec: {} } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch)))).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
    expect(await rejection(custom.patchNamespacedCustomObject({ ...target, name: 'main', body: [{ op: 'test', path: '/spec/engine', value: 'oracle' }] }))).toMatchObject({ code: 422 });
  });

  it('lists with the collection resourceVersion, label selectors and chunks', async () => {
    const { fake, custom, target } = await setup();
    for (const [name, tier] of [['a', 'gold'], ['b', 'silver'], ['c', 'gold']] as const) await custom.createNamespacedCustomObject({ ...target, body: { ...targetBody(name), metadata: { name, labels: { tier } } } });
    const all = (await custom.listNamespacedCustomObject({ ...target })) as Json;
    expect(all).toMatchObject({ kind: 'BackupTargetList', apiVersion: `${GROUP}/${VERSION}`, metadata: { resourceVersion: String(fake.revision) } });
    expect(all.items.map((i: Json) => [i.kind, i.metadata.name])).toEqual([['BackupTarget', 'a'], ['BackupTarget', 'b'], ['BackupTarget', 'c']]);
    const gold = (await custom.listNamespacedCustomObject({ ...target, labelSelector: 'tier=gold' })) as Json;
    expect(gold.items.map((i: Json) => i.metadata.name)).toEqual(['a', 'c']);
    expect(((await custom.listNamespacedCustomObject({ ...target, labelSelector: 'tier notin (gold)' })) as Json).items.map((i: Json) => i.metadata.name)).toEqual(['b']);
    const first = (await custom.listNamespacedCustomObject({ ...target, limit: 2 })) as Json;
    expect(first.metadata).toMatchObject({ remainingItemCount: 1, continue: expect.any(String) });
    await custom.deleteNamespacedCustomObject({ ...target, name: 'c' });
    // The next chunk is read at the first one's resourceVersion: 'c' is still there.
    const rest = (await custom.listNamespacedCustomObject({ ...target, limit: 2, _continue: first.metadata.continue })) as Json;
    expect(rest.items.map((i: Json) => i.metadata.name)).toEqual(['c']);
    expect(rest.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    fake.expireHistory();
    expect(await rejection(custom.listNamespacedCustomObject({ ...target, limit: 2, _continue: first.metadata.continue }))).toMatchObject({ code: 410, reason: 'Expired' });
    // Built-in lists leave kind and apiVersion off their items.
    await fake.kubeConfig().makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'cm' }, data: { a: '1' } } });
    expect((await raw(fake, 'GET', `/api/v1/namespaces/${NS}/configmaps`)).body).toMatchObject({ kind: 'ConfigMapList', apiVersion: 'v1', items: [{ metadata: { name: 'cm' }, data: { a: '1' } }] });
    expect(Object.keys((await raw(fake, 'GET', `/api/v1/namespaces/${NS}/configmaps`)).body.items[0]).sort()).toEqual(['data', 'metadata']);
  });

  it('keeps Leases with optimistic concurrency, so two contenders cannot both take one', async () => {
    const { fake } = await setup();
    const leases = fake.kubeConfig().makeApiClient(CoordinationV1Api);
    const created = await leases.createNamespacedLease({ namespace: NS, body: { metadata: { name: 'strata-controller' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: new Date() } } });
    expect(created.spec?.holderIdentity).toBe('a');
    const renewed = await leases.replaceNamespacedLease({ namespace: NS, name: 'strata-controller', body: { ...created, spec: { ...created.spec, holderIdentity: 'a', leaseTransitions: 0 } } });
    expect(await rejection(leases.replaceNamespacedLease({ namespace: NS, name: 'strata-controller', body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } } }))).toMatchObject({
      code: 409, reason: 'Conflict', message: 'Operation cannot be fulfilled on leases.coordination.k8s.io "strata-controller": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'strata-controller', group: 'coordination.k8s.io', kind: 'leases' },
    });
    expect(fake.get(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/strata-controller`)).toMatchObject({ spec: { holderIdentity: 'a' }, metadata: { resourceVersion: renewed.metadata?.resourceVersion } });
    expect(await rejection(leases.createNamespacedLease({ namespace: NS, body: { metadata: { name: 'strata-controller' }, spec: {} } }))).toMatchObject({ code: 409, reason: 'AlreadyExists', message: 'leases.coordination.k8s.io "strata-controller" already exists' });
  });

  it('stores a secret\'s stringData as base64 data and gives a new pod the Pending phase', async () => {
    const { fake } = await setup();
    const core = fake.kubeConfig().makeApiClient(CoreV1Api);
    const secret = await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 's' }, stringData: { password: 'pw' } } });
    expect(secret).toMatchObject({ type: 'Opaque', data: { password: Buffer.from('pw').toString('base64') } });
    expect(secret.stringData).toBeUndefined();
    const pod = await core.createNamespacedPod({ namespace: NS, body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
    expect(pod.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
    const service = await core.createNamespacedService({ namespace: NS, body: { metadata: { name: 'svc' }, spec: { ports: [{ port: 5432 }] } } });
    expect(service.spec).toMatchObject({ type: 'ClusterIP', clusterIP: expect.stringMatching(/^10\.96\./), ports: [{ port: 5432, targetPort: 5432, protocol: 'TCP' }] });
  });
});
