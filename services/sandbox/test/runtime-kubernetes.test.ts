import { CoreV1Api } from '@kubernetes/client-node';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import type { FakeKubeApi, RecordedCall } from '@sigil/kube-fake';
import { startFakeKubeApi } from '@sigil/kube-fake';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubernetesRuntimeOptions } from '../src/runtime/kubernetes.ts';
import { createKubernetesRuntime, podFailure } from '../src/runtime/kubernetes.ts';
import type { RuntimeState, ServerSpec } from '../src/runtime/types.ts';

const NS = 'sandboxes';
const GIB = 1024 ** 3;
const READY = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'server', ready: true, state: { running: {} } }] };
const postgresSpec: ServerSpec = { id: 'sbx_0a1b', engine: 'postgres', major: 16, username: 'sandbox_admin', password: 'pw-1' };
const mysqlSpec: ServerSpec = { id: 'sbx_9f8e', engine: 'mysql', major: 11, username: 'sandbox_admin', password: "it's-secret" };
const PG_NAME = 'strata-sbx-sbx-0a1b';
const MY_NAME = 'strata-sbx-sbx-9f8e';
const LABELS = (id: string) => ({ 'app.kubernetes.io/name': 'strata-sandbox', 'backups.strata.dev/sandbox': id });
const fromSecret = (name: string, key: string) => ({ name: key, valueFrom: { secretKeyRef: { name, key } } });

let fake: FakeKubeApi | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup(options: Partial<KubernetesRuntimeOptions> = {}) {
  fake = await startFakeKubeApi();
  const runtime = createKubernetesRuntime({ kubeConfig: fake.kubeConfig(), namespace: NS, pollMs: 2, readyTimeoutMs: 10_000, ...options });
  return { fake, runtime };
}

const podPath = (name: string) => `/api/v1/namespaces/${NS}/pods/${name}`;
const secretPath = (name: string) => `/api/v1/namespaces/${NS}/secrets/${name}`;
const servicePath = (name: string) => `/api/v1/namespaces/${NS}/services/${name}`;
const claimPath = (name: string) => `/api/v1/namespaces/${NS}/persistentvolumeclaims/${name}-data`;
/** The reference every object of a sandbox carries to its Secret, which owns them. */
const ownedBySecret = (api: FakeKubeApi, name: string) => [{ apiVersion: 'v1', kind: 'Secret', name, uid: api.get(secretPath(name))!.metadata.uid }];

/** What the kubelet reports once the pod runs on a node. */
function setPodStatus(api: FakeKubeApi, name: string, status: Record<string, unknown>) {
  api.mutate(podPath(name), (pod) => {
    pod.status = status;
    pod.spec = { ...(pod.spec as object), nodeName: 'node-1' };
  });
}
const isPodRead = (name: string) => (call: RecordedCall) => call.method === 'GET' && call.path === podPath(name);
const created = (api: FakeKubeApi, kind: string) => api.calls.find((c) => c.method === 'POST' && c.path === `/api/v1/namespaces/${NS}/${kind}`)?.body;
const summary = (calls: RecordedCall[]) => calls.map((c) => `${c.method} ${c.path} ${c.status}`);
/** Wipe's reads after the Secret's deletion, looking for objects without an owner (none left: all were owned). */
const afterSecretDeleted = (name: string) => [`GET ${podPath(name)} 404`, `GET ${servicePath(name)} 404`, `GET ${claimPath(name)} 404`];

/** Starts a sandbox and makes its pod Ready once `start` is polling it. */
async function startReady(api: FakeKubeApi, runtime: ReturnType<typeof createKubernetesRuntime>, spec: ServerSpec, name: string, previous?: RuntimeState) {
  const mark = api.calls.length;
  const starting = runtime.start(spec, previous);
  await api.waitForCall(isPodRead(name), mark);
  setPodStatus(api, name, READY);
  return await starting;
}

describe('kubernetes runtime: the objects of a sandbox', () => {
  it('creates a secret, a service and a postgres pod, waits until the pod is Ready, and answers where it runs', async () => {
    const { fake, runtime } = await setup({ sizeLimitBytes: () => 2 * GIB, cpu: '500m', memory: '1Gi' });
    const starting = runtime.start(postgresSpec);
    await fake.waitForCall(isPodRead(PG_NAME));
    expect(await runtime.alive({ engine: 'postgres', dir: `${NS}/${PG_NAME}`, host: '', port: 5432 })).toBe(false);
    setPodStatus(fake, PG_NAME, READY);
    const state = await starting;

    expect(state).toEqual({ engine: 'postgres', dir: `${NS}/${PG_NAME}`, host: `${PG_NAME}.${NS}.svc`, port: 5432 });
    expect(summary(fake.calls.slice(0, 3))).toEqual([`POST /api/v1/namespaces/${NS}/secrets 201`, `POST /api/v1/namespaces/${NS}/services 201`, `POST /api/v1/namespaces/${NS}/pods 201`]);
    expect(fake.calls.every((c) => c.authorization === 'Bearer t')).toBe(true);
    expect(created(fake, 'secrets')).toEqual({
      apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: PG_NAME, labels: LABELS(postgresSpec.id) },
      stringData: { username: 'sandbox_admin', password: 'pw-1', POSTGRES_USER: 'sandbox_admin', POSTGRES_PASSWORD: 'pw-1', POSTGRES_DB: 'postgres' },
    });
    expect(created(fake, 'services')).toEqual({
      apiVersion: 'v1', kind: 'Service', metadata: { name: PG_NAME, labels: LABELS(postgresSpec.id), ownerReferences: ownedBySecret(fake, PG_NAME) },
      spec: { type: 'ClusterIP', selector: { 'backups.strata.dev/sandbox': postgresSpec.id }, ports: [{ name: 'postgres', port: 5432, targetPort: 5432, protocol: 'TCP' }] },
    });
    expect(created(fake, 'pods')).toEqual({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: PG_NAME, labels: LABELS(postgresSpec.id), ownerReferences: ownedBySecret(fake, PG_NAME) },
      spec: {
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        containers: [{
          name: 'server',
          image: 'postgres:16',
          args: ['postgres', '-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'synchronous_commit=off'],
          env: [fromSecret(PG_NAME, 'POSTGRES_USER'), fromSecret(PG_NAME, 'POSTGRES_PASSWORD'), fromSecret(PG_NAME, 'POSTGRES_DB'), { name: 'PGDATA', value: '/var/lib/postgresql/sandbox/pgdata' }],
          ports: [{ name: 'postgres', containerPort: 5432, protocol: 'TCP' }],
          readinessProbe: { exec: { command: ['sh', '-c', 'pg_isready -h 127.0.0.1 -p 5432 -U "$POSTGRES_USER" -d postgres'] }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 3 },
          resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '500m', memory: '1Gi' } },
          volumeMounts: [{ name: 'data', mountPath: '/var/lib/postgresql/sandbox' }],
        }],
        volumes: [{ name: 'data', emptyDir: { sizeLimit: '2Gi' } }],
      },
    });
    // The service exposes the pod: its selector picks the pod's labels, its port is the server's container port.
    const service = fake.get(servicePath(PG_NAME)) as unknown as V1Service;
    const pod = fake.get(podPath(PG_NAME)) as unknown as V1Pod;
    expect(pod.metadata?.labels).toMatchObject(service.spec!.selector!);
    expect(service.spec!.ports![0]!.targetPort).toBe(pod.spec!.containers[0]!.ports![0]!.containerPort);
    // The real API server keeps a secret's values as base64 data.
    expect(fake.get(secretPath(PG_NAME))?.data).toMatchObject({ POSTGRES_PASSWORD: Buffer.from('pw-1').toString('base64') });
    expect(await runtime.alive(state)).toBe(true);
  });

  it('runs mariadb:11 with the admin granted everything by an init script from the secret, and a random root password', async () => {
    const { fake, runtime } = await setup({ images: { mysql: 'registry.local/mariadb:11.4' } });
    const state = await startReady(fake, runtime, mysqlSpec, MY_NAME);

    expect(state).toEqual({ engine: 'mysql', dir: `${NS}/${MY_NAME}`, host: `${MY_NAME}.${NS}.svc`, port: 3306 });
    expect(created(fake, 'secrets')).toEqual({
      apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: MY_NAME, labels: LABELS(mysqlSpec.id) },
      stringData: {
        username: 'sandbox_admin', password: "it's-secret", MARIADB_USER: 'sandbox_admin', MARIADB_PASSWORD: "it's-secret",
        MARIADB_ROOT_PASSWORD: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
        'admin-grants.sql': "GRANT ALL PRIVILEGES ON *.* TO 'sandbox_admin'@'%' WITH GRANT OPTION;\n",
      },
    });
    expect(created(fake, 'services')).toMatchObject({ metadata: { ownerReferences: ownedBySecret(fake, MY_NAME) }, spec: { type: 'ClusterIP', selector: { 'backups.strata.dev/sandbox': mysqlSpec.id }, ports: [{ name: 'mysql', port: 3306, targetPort: 3306 }] } });
    expect(created(fake, 'pods')).toEqual({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: MY_NAME, labels: LABELS(mysqlSpec.id), ownerReferences: ownedBySecret(fake, MY_NAME) },
      spec: {
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        containers: [{
          name: 'server',
          image: 'registry.local/mariadb:11.4',
          args: ['--skip-log-bin', '--skip-name-resolve', '--innodb-flush-log-at-trx-commit=0', '--max-allowed-packet=256M'],
          env: [fromSecret(MY_NAME, 'MARIADB_USER'), fromSecret(MY_NAME, 'MARIADB_PASSWORD'), fromSecret(MY_NAME, 'MARIADB_ROOT_PASSWORD')],
          ports: [{ name: 'mysql', containerPort: 3306, protocol: 'TCP' }],
          readinessProbe: { exec: { command: ['mariadb-admin', 'ping', '-h', '127.0.0.1', '--silent'] }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 3 },
          volumeMounts: [{ name: 'data', mountPath: '/var/lib/mysql' }, { name: 'init', mountPath: '/docker-entrypoint-initdb.d', readOnly: true }],
        }],
        volumes: [{ name: 'data', emptyDir: {} }, { name: 'init', secret: { secretName: MY_NAME, items: [{ key: 'admin-grants.sql', path: 'admin-grants.sql' }] } }],
      },
    });
  });

  it('puts the data on a claim of the storage class, which stop keeps and a new start mounts again', async () => {
    const { fake, runtime } = await setup({ storageClass: 'fast-ssd', sizeLimitBytes: () => 5 * GIB, images: { postgres: (major) => `postgres:${major}-alpine` } });
    const state = await startReady(fake, runtime, postgresSpec, PG_NAME);
    expect(created(fake, 'persistentvolumeclaims')).toEqual({
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${PG_NAME}-data`, labels: LABELS(postgresSpec.id), ownerReferences: ownedBySecret(fake, PG_NAME) },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast-ssd', resources: { requests: { storage: '5Gi' } } },
    });
    expect(created(fake, 'pods')).toMatchObject({ spec: { containers: [{ image: 'postgres:16-alpine' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `${PG_NAME}-data` } }] } });

    // A deleted pod stays Terminating for a while; the next start waits for its name to be free.
    fake.holdPodDeletions(true);
    let mark = fake.calls.length;
    await runtime.stop(state);
    expect(summary(fake.calls.slice(mark))).toEqual([`DELETE ${podPath(PG_NAME)} 200`]);
    expect(await runtime.alive(state)).toBe(false);
    mark = fake.calls.length;
    const again = runtime.start(postgresSpec, state);
    await fake.waitForCall((c) => c.method === 'GET' && c.path === podPath(PG_NAME), mark);
    fake.finishDeletion(podPath(PG_NAME));
    await fake.waitForCall((c) => c.method === 'POST' && c.path.endsWith('/pods') && c.status === 201, mark);
    setPodStatus(fake, PG_NAME, READY);
    expect(await again).toEqual(state);
    expect(fake.calls.slice(mark).filter((c) => c.method === 'POST').map((c) => `${c.path} ${c.status}`)).toEqual([
      `/api/v1/namespaces/${NS}/secrets 409`, `/api/v1/namespaces/${NS}/persistentvolumeclaims 409`, `/api/v1/namespaces/${NS}/services 409`,
      `/api/v1/namespaces/${NS}/pods 409`, `/api/v1/namespaces/${NS}/pods 201`,
    ]);

    // Wiping deletes the Secret only; the garbage collector deletes the pod, the service and the claim it owns (the
    // reads find nothing left without an owner).
    fake.holdPodDeletions(false);
    mark = fake.calls.length;
    await runtime.wipe(state);
    expect(summary(fake.calls.slice(mark))).toEqual([`DELETE ${secretPath(PG_NAME)} 200`, ...afterSecretDeleted(PG_NAME)]);
    expect(new URLSearchParams(fake.calls[mark]?.query).get('propagationPolicy')).toBe('Background');
    expect(fake.names()).toEqual([]);
  });

  it('sizes the claim to the sandbox size limit, and keeps the claim and its data through a stop', async () => {
    const { fake, runtime } = await setup({ storageClass: 'standard', sizeLimitBytes: () => 1.5 * GIB });
    const state = await startReady(fake, runtime, postgresSpec, PG_NAME);
    expect(fake.get(claimPath(PG_NAME))).toMatchObject({ spec: { storageClassName: 'standard', resources: { requests: { storage: '1536Mi' } } } });
    await runtime.stop(state);
    expect(fake.names()).toEqual([claimPath(PG_NAME), secretPath(PG_NAME), servicePath(PG_NAME)]);
    await runtime.wipe(state);
    expect(fake.names()).toEqual([]);
  });
});

describe('kubernetes runtime: lifecycle', () => {
  it('adopts the objects that exist (409) and keeps their secret', async () => {
    const { fake, runtime } = await setup();
    const state = await startReady(fake, runtime, mysqlSpec, MY_NAME);
    const rootPassword = fake.get(secretPath(MY_NAME))?.data;
    const mark = fake.calls.length;
    expect(await runtime.start(mysqlSpec, state)).toEqual(state);
    expect(summary(fake.calls.slice(mark))).toEqual([
      `POST /api/v1/namespaces/${NS}/secrets 409`, `GET ${secretPath(MY_NAME)} 200`, `POST /api/v1/namespaces/${NS}/services 409`, `POST /api/v1/namespaces/${NS}/pods 409`,
      `GET ${podPath(MY_NAME)} 200`, `GET ${podPath(MY_NAME)} 200`,
    ]);
    expect(fake.get(secretPath(MY_NAME))?.data).toEqual(rootPassword);
    // A first start that a restart of the service interrupted finds its objects too.
    expect(await runtime.start(mysqlSpec)).toEqual(state);
  });

  it('stop deletes only the pod; wipe deletes everything and tolerates what is gone already', async () => {
    const { fake, runtime } = await setup();
    const state = await startReady(fake, runtime, postgresSpec, PG_NAME);
    expect(await runtime.alive(state)).toBe(true);
    let mark = fake.calls.length;
    await runtime.stop(state);
    expect(summary(fake.calls.slice(mark))).toEqual([`DELETE ${podPath(PG_NAME)} 200`]);
    expect(fake.names()).toEqual([secretPath(PG_NAME), servicePath(PG_NAME)]);
    expect(await runtime.alive(state)).toBe(false);

    mark = fake.calls.length;
    await runtime.wipe(state);
    expect(summary(fake.calls.slice(mark))).toEqual([`DELETE ${secretPath(PG_NAME)} 200`, ...afterSecretDeleted(PG_NAME)]);
    expect(fake.names()).toEqual([]);
    mark = fake.calls.length;
    await runtime.wipe(state);
    expect(summary(fake.calls.slice(mark))).toEqual([`DELETE ${secretPath(PG_NAME)} 404`, ...afterSecretDeleted(PG_NAME)]);
    await runtime.stop(state);
  });

  it('wipe deletes by name the objects an earlier runtime version made without an owner reference', async () => {
    const { fake, runtime } = await setup();
    const core = fake.kubeConfig().makeApiClient(CoreV1Api);
    const metadata = { name: PG_NAME, labels: LABELS(postgresSpec.id) };
    await core.createNamespacedSecret({ namespace: NS, body: { metadata, stringData: { password: 'pw' } } });
    await core.createNamespacedPod({ namespace: NS, body: { metadata, spec: { containers: [{ name: 'server', image: 'postgres:16' }] } } });
    await core.createNamespacedService({ namespace: NS, body: { metadata, spec: { ports: [{ port: 5432 }] } } });
    await core.createNamespacedPersistentVolumeClaim({ namespace: NS, body: { metadata: { ...metadata, name: `${PG_NAME}-data` }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } });
    const mark = fake.calls.length;
    await runtime.wipe({ engine: 'postgres', dir: `${NS}/${PG_NAME}`, host: `${PG_NAME}.${NS}.svc`, port: 5432 });
    expect(summary(fake.calls.slice(mark))).toEqual([
      `DELETE ${secretPath(PG_NAME)} 200`,
      `GET ${podPath(PG_NAME)} 200`, `DELETE ${podPath(PG_NAME)} 200`,
      `GET ${servicePath(PG_NAME)} 200`, `DELETE ${servicePath(PG_NAME)} 200`,
      `GET ${claimPath(PG_NAME)} 200`, `DELETE ${claimPath(PG_NAME)} 200`,
    ]);
    expect(fake.names()).toEqual([]);
  });

  it('reads the data volume usage from the kubelet summary through the node proxy, and 0 when there is none', async () => {
    const { fake, runtime } = await setup();
    const state = await startReady(fake, runtime, postgresSpec, PG_NAME);
    expect(await runtime.usedBytes(state)).toBe(0);
    fake.nodeStats.set('node-1', {
      node: { nodeName: 'node-1' },
      pods: [
        { podRef: { name: 'other', namespace: NS }, volume: [{ name: 'data', usedBytes: 1 }] },
        { podRef: { name: PG_NAME, namespace: NS }, volume: [{ name: 'kube-api-access', usedBytes: 7 }, { name: 'data', usedBytes: 123_456_789 }] },
      ],
    });
    expect(await runtime.usedBytes(state)).toBe(123_456_789);
    expect(fake.calls.at(-1)).toMatchObject({ method: 'GET', path: expect.stringMatching(/^\/api\/v1\/nodes\/node-1\/proxy\/stats(\/|%2F)summary$/), status: 200 });
    await runtime.stop(state);
    expect(await runtime.usedBytes(state)).toBe(0);
  });
});

describe('kubernetes runtime: failures', () => {
  it('rejects with the reason of a pod that cannot pull its image, and deletes what the first start created', async () => {
    const { fake, runtime } = await setup({ images: { postgres: () => 'postgres:99' } });
    const starting = runtime.start(postgresSpec);
    await fake.waitForCall(isPodRead(PG_NAME));
    setPodStatus(fake, PG_NAME, {
      phase: 'Pending',
      containerStatuses: [{ name: 'server', ready: false, state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "postgres:99"' } } }],
    });
    await expect(starting).rejects.toThrow(`the pod ${NS}/${PG_NAME} failed: ImagePullBackOff: Back-off pulling image "postgres:99"`);
    expect(fake.names()).toEqual([]);
  });

  it('keeps the objects of a start again that failed: the stored state still names them', async () => {
    const { fake, runtime } = await setup();
    const state = await startReady(fake, runtime, postgresSpec, PG_NAME);
    setPodStatus(fake, PG_NAME, { phase: 'Failed', reason: 'Evicted', message: 'Usage of EmptyDir volume "data" exceeds the limit "2Gi".' });
    expect(await runtime.alive(state)).toBe(false);
    await expect(runtime.start(postgresSpec, state)).rejects.toThrow('failed: Evicted: Usage of EmptyDir volume "data" exceeds the limit "2Gi".');
    expect(fake.names()).toHaveLength(3);
  });

  it('gives up after readyTimeoutMs with the last state it saw', async () => {
    const { runtime } = await setup({ readyTimeoutMs: 100 });
    await expect(runtime.start(postgresSpec)).rejects.toThrow(`the pod ${NS}/${PG_NAME} was not ready within 0.1s (phase Pending)`);
  });

  it('reads the pod once before giving up, even when creating its objects used up the time', async () => {
    const { runtime } = await setup({ readyTimeoutMs: 1 });
    await expect(runtime.start(postgresSpec)).rejects.toThrow(`the pod ${NS}/${PG_NAME} was not ready within 0.001s (phase Pending)`);
  });

  it('says what Kubernetes refused, in its words', async () => {
    const { fake, runtime } = await setup();
    fake.refuseNext({ method: 'POST', path: `/api/v1/namespaces/${NS}/pods`, code: 403, reason: 'Forbidden', message: 'pods is forbidden: exceeded quota: sandboxes' });
    await expect(runtime.start(postgresSpec)).rejects.toThrow(`Kubernetes refused to create the pod ${NS}/${PG_NAME}: pods is forbidden: exceeded quota: sandboxes`);
    expect(fake.names()).toEqual([]);
  });

  it('tells a crash loop by the exit of the server', () => {
    expect(podFailure({ status: { phase: 'Running', containerStatuses: [{ name: 'server', image: 'i', imageID: '', ready: false, restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } }, lastState: { terminated: { exitCode: 1, reason: 'Error' } } }] } })).toBe('CrashLoopBackOff: the server exited with code 1 (Error)');
    expect(podFailure({ status: { phase: 'Pending', containerStatuses: [{ name: 'server', image: 'i', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] } })).toBeUndefined();
  });
});
