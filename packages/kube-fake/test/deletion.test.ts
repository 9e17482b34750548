import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/index.ts';
import { fakeForEachTest, GROUP, NS, openWatch, raw, rejection, targetSpec, targetsPath, VERSION } from './helpers.ts';

const setup = fakeForEachTest();

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const FINALIZER = 'backups.strata.dev/replication-slot';
const ownedBy = (owner: KubeObject, blockOwnerDeletion = true) => [{ apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion }];

describe('kube-fake: finalizers and deletion timestamps', () => {
  it('keeps an object with finalizers, marked for deletion, until its last finalizer goes; then watchers see it go', async () => {
    const { fake, custom, target } = await setup();
    const created = await custom.createNamespacedCustomObject({ ...target, body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'BackupTarget', metadata: { name: 'main', finalizers: [FINALIZER] }, spec: targetSpec() } });
    const watch = await openWatch(fake, `${targetsPath}?watch=true&resourceVersion=${created.metadata.resourceVersion}`);
    const deleting = await custom.deleteNamespacedCustomObject({ ...target, name: 'main' });
    expect(deleting.metadata).toMatchObject({ deletionTimestamp: expect.stringMatching(/Z$/), deletionGracePeriodSeconds: 0, finalizers: [FINALIZER], generation: 2 });
    expect(fake.get(`${targetsPath}/main`)).toMatchObject({ metadata: { deletionTimestamp: deleting.metadata.deletionTimestamp } });
    // Deleting again changes nothing; adding a finalizer now is forbidden.
    expect((await custom.deleteNamespacedCustomObject({ ...target, name: 'main' })).metadata.resourceVersion).toBe(deleting.metadata.resourceVersion);
    expect(await rejection(custom.patchNamespacedCustomObject({ ...target, name: 'main', body: { metadata: { finalizers: [FINALIZER, 'other/one'] } } }, merge))).toMatchObject({
      code: 422, reason: 'Invalid', message: `BackupTarget.${GROUP} "main" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"other/one"}`,
    });
    await custom.patchNamespacedCustomObject({ ...target, name: 'main', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    expect(fake.get(`${targetsPath}/main`)).toBeUndefined();
    const events = await watch.next(3);
    expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'DELETED']);
    expect(events[1]!.object.metadata.finalizers).toBeUndefined();
    expect(Number(events[2]!.object.metadata.resourceVersion)).toBe(fake.revision);
    watch.close();
  });

  it('answers 409 when a delete precondition does not hold', async () => {
    const { fake, core } = await setup();
    await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'cm' } } });
    const answer = await raw(fake, 'DELETE', `/api/v1/namespaces/${NS}/configmaps/cm`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-it' } });
    expect(answer.status).toBe(409);
    expect(answer.body.message).toBe(`Operation cannot be fulfilled on configmaps "cm": Precondition failed: UID in precondition: not-it, UID in object meta: ${fake.get(`/api/v1/namespaces/${NS}/configmaps/cm`)!.metadata.uid}`);
  });
});

describe('kube-fake: owner references and garbage collection', () => {
  async function family(core: CoreV1Api) {
    const owner = await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'owner' } } }) as KubeObject;
    const secret = await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'dependent', ownerReferences: ownedBy(owner) } } });
    const pod = await core.createNamespacedPod({ namespace: NS, body: { metadata: { name: 'dependent', ownerReferences: ownedBy(owner, false) }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
    return { owner, secret, pod };
  }

  it('deletes the dependents of a deleted owner in the background (the default)', async () => {
    const { fake, core } = await setup();
    await family(core);
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'unrelated' } } });
    await core.deleteNamespacedConfigMap({ namespace: NS, name: 'owner' });
    expect(fake.names()).toEqual([`/api/v1/namespaces/${NS}/secrets/unrelated`]);
  });

  it('keeps a foreground-deleted owner until its blocking dependents are gone, and a dependent with a finalizer holds it', async () => {
    const { fake, core } = await setup();
    const { owner } = await family(core);
    await core.patchNamespacedSecret({ namespace: NS, name: 'dependent', body: [{ op: 'add', path: '/metadata/finalizers', value: ['example.com/hold'] }] });
    await core.deleteNamespacedConfigMap({ namespace: NS, name: 'owner', propagationPolicy: 'Foreground' });
    expect(fake.get(`/api/v1/namespaces/${NS}/configmaps/owner`)!.metadata).toMatchObject({ finalizers: ['foregroundDeletion'], deletionTimestamp: expect.any(String) });
    expect(fake.get(`/api/v1/namespaces/${NS}/pods/dependent`)).toBeUndefined();
    expect(fake.get(`/api/v1/namespaces/${NS}/secrets/dependent`)!.metadata.deletionTimestamp).toEqual(expect.any(String));
    await core.patchNamespacedSecret({ namespace: NS, name: 'dependent', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    expect(fake.names()).toEqual([]);
    expect(owner.metadata.uid).toBeTruthy();
  });

  it('orphans the dependents when asked: their owner references go, they stay', async () => {
    const { fake, core } = await setup();
    await family(core);
    await core.deleteNamespacedConfigMap({ namespace: NS, name: 'owner', propagationPolicy: 'Orphan' });
    expect(fake.names()).toEqual([`/api/v1/namespaces/${NS}/pods/dependent`, `/api/v1/namespaces/${NS}/secrets/dependent`]);
    expect(fake.get(`/api/v1/namespaces/${NS}/secrets/dependent`)!.metadata.ownerReferences).toBeUndefined();
  });

  it('keeps a dependent that still has another owner, dropping the reference to the one that went', async () => {
    const { fake, core } = await setup();
    const first = await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'first' } } }) as KubeObject;
    const second = await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'second' } } }) as KubeObject;
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'shared', ownerReferences: [...ownedBy(first), { ...ownedBy(second)[0]!, controller: false }] } } });
    await core.deleteNamespacedConfigMap({ namespace: NS, name: 'first' });
    expect(fake.get(`/api/v1/namespaces/${NS}/secrets/shared`)!.metadata.ownerReferences!.map((r) => r.name)).toEqual(['second']);
    await core.deleteNamespacedConfigMap({ namespace: NS, name: 'second' });
    expect(fake.names()).toEqual([]);
  });

  it('holds a pod Terminating while asked to, like a kubelet finishing its containers', async () => {
    const { fake, core } = await setup();
    await core.createNamespacedPod({ namespace: NS, body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
    fake.holdPodDeletions(true);
    const deleting = await core.deleteNamespacedPod({ namespace: NS, name: 'p' });
    expect(deleting.metadata).toMatchObject({ deletionTimestamp: expect.any(Date), deletionGracePeriodSeconds: 30 });
    expect(await rejection(core.createNamespacedPod({ namespace: NS, body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } }))).toMatchObject({ code: 409, reason: 'AlreadyExists' });
    fake.finishDeletion(`/api/v1/namespaces/${NS}/pods/p`);
    expect(fake.names()).toEqual([]);
  });
});
