import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import pg from 'pg';
import YAML from 'yaml';
import { CoordinationV1Api, CustomObjectsApi, V1MicroTime } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@sigil/kit/log';
import { startFakeKubeApi, type FakeKubeApi } from '@sigil/kube-fake';
import { runCli } from '@strata/cli';
import { createCatalog, createController, FINALIZER, type Catalog, type Controller } from '@strata/controller';
import { call, startTestStack, until, type TestStack } from './stack.ts';

/**
 * Issue 33's "done means" for the operator: the real Strata services (the e2e stack), the fake Kubernetes API server
 * with the six CRDs, and the controller in this process between them. The quickstart's resources are created as
 * custom resources (as `kubectl apply` would) and reach Ready; the controller survives an expired watch history
 * (410 Gone) and a lost Lease; a deleted target's replication slot is gone before its finalizer is removed.
 */
const GROUP = 'backups.strata.dev';
const VERSION = 'v1alpha1';
const NS = 'default';
const LEASE = { namespace: 'strata', name: 'strata-controller' };
const PLURAL: Record<string, string> = { BackupStore: 'backupstores', BackupPolicy: 'backuppolicies', BackupTarget: 'backuptargets' };
const crdDir = path.resolve(import.meta.dirname, '../../infra/k8s/crds');

interface Resource {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; generation?: number; finalizers?: string[]; deletionTimestamp?: string; resourceVersion?: string };
  spec: Record<string, unknown>;
  status?: { observedGeneration?: number; phase?: string; conditions?: Array<{ type: string; status: string; reason?: string; message?: string; observedGeneration?: number }> };
}

let stack: TestStack;
let fake: FakeKubeApi;
let controller: Controller;
let token: string;
let documents: Resource[];
/** Whether the postgres target's slot existed when the controller got the catalog's DELETE answer. */
let slotAfterCatalogDelete: boolean | undefined;
let slot = '';
let deleteAnswer: string | undefined;

const objectPath = (kind: string, name: string) => `/apis/${GROUP}/${VERSION}/namespaces/${NS}/${PLURAL[kind]}/${name}`;
const stored = (kind: string, name: string) => fake.get(objectPath(kind, name)) as Resource | undefined;
const custom = () => fake.kubeConfig().makeApiClient(CustomObjectsApi);
const api = (method: string, route: string, body?: unknown) => call(stack.gatewayUrl, method, `/api/v1${route}`, { body, headers: { 'cf-access-token': token } });

function isReady(object: Resource | undefined): boolean {
  const generation = object?.metadata.generation ?? 1;
  const ready = object?.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === generation && object?.status?.observedGeneration === generation;
}
const waitReady = (kind: string, name: string, generation = 1) =>
  until(() => Promise.resolve(stored(kind, name)), (o) => (o?.metadata.generation ?? 0) >= generation && isReady(o), 30_000);

async function setSpec(kind: string, name: string, change: (spec: Record<string, unknown>) => Record<string, unknown>) {
  const at = { group: GROUP, version: VERSION, namespace: NS, plural: PLURAL[kind] as string, name };
  const current = (await custom().getNamespacedCustomObject(at)) as Resource;
  await custom().replaceNamespacedCustomObject({ ...at, body: { ...current, spec: change(current.spec) } });
}

async function setLeaseHolder(holder: string, durationSeconds: number) {
  const leases = fake.kubeConfig().makeApiClient(CoordinationV1Api);
  // The controller renews the same Lease meanwhile: a write that loses that race (409) reads it again.
  for (let attempt = 1; ; attempt++) {
    const lease = await leases.readNamespacedLease(LEASE);
    try {
      await leases.replaceNamespacedLease({ ...LEASE, body: { ...lease, spec: { ...lease.spec, holderIdentity: holder, leaseDurationSeconds: durationSeconds, renewTime: new V1MicroTime() } } });
      return;
    } catch (error) {
      if ((error as { code?: number }).code !== 409 || attempt >= 20) throw error;
    }
  }
}

async function postgresQuery<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: stack.infra.postgres.adminUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}
const slotExists = async (name: string) => (await postgresQuery('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [name])).length > 0;

/** The quickstart's documents as `strata quickstart` writes them for this stack. */
async function quickstartDocuments(): Promise<Resource[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-controller-e2e-'));
  const file = path.join(dir, 'quickstart.yaml');
  const sink = new PassThrough();
  let err = '';
  sink.on('data', (chunk) => (err += chunk));
  const code = await runCli(
    ['quickstart', '--stack', stack.stateDir, '--file', file, '--bucket', `${stack.namespace.replace(/_/g, '-')}ctl`.replace(/-+/g, '-'), '--postgres-databases', 'postgres', '--mysql-databases', 'mysql'],
    { stdout: new PassThrough(), stderr: sink, env: { STRATA_CONFIG: path.join(dir, 'config.json'), HOME: dir } },
  );
  if (code !== 0) throw new Error(`strata quickstart failed: ${err}`);
  return YAML.parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => doc.toJSON() as Resource);
}

beforeAll(async () => {
  [stack, fake] = await Promise.all([
    startTestStack(),
    startFakeKubeApi({ crds: ['backupstores', 'backuppolicies', 'backuptargets', 'backups', 'restores', 'sandboxes'].map((plural) => YAML.parse(readFileSync(path.join(crdDir, `${GROUP}_${plural}.yaml`), 'utf8')) as object) }),
  ]);
  const issued = await call(stack.gatewayUrl, 'POST', '/api/dev/token', { body: { email: 'controller@example.test', role: 'restorer-admin' } });
  expect(issued.status, JSON.stringify(issued.body)).toBe(200);
  token = issued.body.token;
  documents = await quickstartDocuments();
  // Credentials go to Strata's own secret store (the controller has no access to Kubernetes Secrets).
  const secrets = documents.filter((d) => d.kind === 'Secret');
  expect(secrets).toHaveLength(4);
  const applied = await api('POST', '/resources', secrets);
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);

  const real = createCatalog({ url: stack.gatewayUrl, token });
  // Observes the order of the deletion: the slot is checked the moment the catalog's DELETE answered, before the
  // controller can send the request that removes the finalizer.
  const catalog: Catalog = {
    ...real,
    async remove(kind, namespace, name) {
      const answer = await real.remove(kind, namespace, name);
      if (kind === 'BackupTarget' && name === 'postgres') {
        deleteAnswer = answer;
        slotAfterCatalogDelete = await slotExists(slot);
      }
      return answer;
    },
  };
  controller = createController({
    kubeConfig: fake.kubeConfig(),
    catalog,
    namespaces: [NS],
    lease: { ...LEASE, identity: 'strata-controller-0', durationSeconds: 2, renewMs: 200 },
    backoff: { baseMs: 200, maxMs: 2000 },
    resyncMs: 600_000,
    log: createLogger('strata-controller', process.env.TEST_LOG_LEVEL ?? 'warn'),
  });
  controller.start();
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await fake?.close();
  if (slot && stack) await postgresQuery('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active', [slot]);
  await stack?.stop();
});

describe('the strata-controller between a fake cluster and the real Strata services', () => {
  it("brings the quickstart's store, policy and targets, created as custom resources, to Ready", async () => {
    // The test servers are shared by the whole suite: no change capture of everything it writes (as strata.test.ts).
    const resources = documents.filter((d) => d.kind !== 'Secret').map((d) => (d.kind === 'BackupPolicy' ? { ...d, spec: { ...d.spec, pitr: { enabled: false } } } : d));
    expect(resources.map((r) => `${r.kind}/${r.metadata.name}`)).toEqual(['BackupStore/local', 'BackupPolicy/nightly', 'BackupTarget/postgres', 'BackupTarget/mariadb']);
    // Dependents first, as an unordered `kubectl apply -f dir/` may: they are NotReady until what they name exists.
    for (const resource of [...resources].reverse()) {
      await custom().createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL[resource.kind] as string, body: resource });
    }
    for (const resource of resources) {
      const ready = await waitReady(resource.kind, resource.metadata.name);
      expect(ready?.metadata.finalizers).toEqual([FINALIZER]);
      expect(ready?.status?.phase).toBe('Ready');
    }
    // The catalog holds what kubectl applied.
    const target = await api('GET', '/resources/BackupTarget/default/postgres');
    expect(target.body.spec).toMatchObject({ engine: 'postgres', policy: 'nightly', databases: ['postgres'] });
  }, 45_000);

  it('keeps reconciling after the watch history expired (410 Gone)', async () => {
    const from = fake.calls.length;
    fake.expireHistory();
    await fake.waitForCall((c) => c.method === 'GET' && c.path.endsWith('/backuptargets') && !c.query.includes('watch='), from);
    await setSpec('BackupTarget', 'mariadb', (spec) => ({ ...spec, mask: ['^email$', '^phone$'] }));
    await waitReady('BackupTarget', 'mariadb', 2);
    expect((await api('GET', '/resources/BackupTarget/default/mariadb')).body.spec.mask).toEqual(['^email$', '^phone$']);
  }, 30_000);

  it('stops writing while another holder has its Lease, and catches up when the Lease is free', async () => {
    // Nothing queued, backing off or running (earlier tests' retries): no write can pass its leadership check just
    // before the Lease is taken and land after `from`. The resync (10 min here) cannot start any meanwhile.
    await controller.idle();
    await setLeaseHolder('strata-controller-1', 30);
    await controller.leading(false);
    const from = fake.calls.length;
    await setSpec('BackupPolicy', 'nightly', (spec) => ({ ...spec, full: { schedule: '30 4 * * *' } }));
    // Several renew periods without the Lease: no status written, the catalog keeps the old schedule.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(fake.calls.slice(from).filter((c) => c.method === 'PUT' && c.path.endsWith('/status'))).toEqual([]);
    expect((await api('GET', '/resources/BackupPolicy/default/nightly')).body.spec.full.schedule).toBe('0 3 * * *');
    await setLeaseHolder('', 1);
    await controller.leading(true);
    await waitReady('BackupPolicy', 'nightly', 2);
    expect((await api('GET', '/resources/BackupPolicy/default/nightly')).body.spec.full.schedule).toBe('30 4 * * *');
  }, 30_000);

  it("releases a deleted target's replication slot before its finalizer is removed", async () => {
    // A slot as the target's streamer leaves it (named after the catalog's uid of the target), not in use.
    const uid = (await api('GET', '/resources/BackupTarget/default/postgres')).body.metadata.uid as string;
    slot = `strata_${uid.toLowerCase().replace(/[^a-z0-9]/g, '_')}`.slice(0, 63);
    await postgresQuery('SELECT pg_create_physical_replication_slot($1, true)', [slot]);
    const atFinalizerRemoval: Array<{ catalogAnswered: boolean; slotExisted: boolean | undefined }> = [];
    fake.onRequest((request) => {
      const body = request.body as Resource | undefined;
      if (request.method === 'PUT' && request.path.endsWith('/backuptargets/postgres') && body?.metadata.deletionTimestamp && !body.metadata.finalizers?.includes(FINALIZER)) {
        atFinalizerRemoval.push({ catalogAnswered: deleteAnswer !== undefined, slotExisted: slotAfterCatalogDelete });
      }
    });
    await custom().deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: 'backuptargets', name: 'postgres' });
    await until(() => Promise.resolve(stored('BackupTarget', 'postgres')), (o) => o === undefined, 20_000);
    expect(atFinalizerRemoval).toEqual([{ catalogAnswered: true, slotExisted: false }]);
    expect(deleteAnswer).toContain(`Replication slot ${slot} was released`);
    expect(await slotExists(slot)).toBe(false);
    expect((await api('GET', '/resources/BackupTarget/default/postgres')).status).toBe(404);
  }, 30_000);
});
