/**
 * A fake Kubernetes API server on loopback for tests of code that uses @kubernetes/client-node: namespaced core
 * objects, Leases and the custom resources of given CRDs, with the API server's semantics for what our code relies on
 * (resourceVersions and watches, 410 Gone, optimistic concurrency, the status subresource, finalizers, owner
 * references and garbage collection). README.md says what is implemented and what was checked against recorded
 * answers of a real API server.
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { discovery } from './discovery.ts';
import { handleResource, selectorOf } from './handlers.ts';
import type { KubeObject } from './objects.ts';
import type { ResourceType } from './resources.ts';
import { BUILTIN_TYPES, objectPath, route, typesOfCrd } from './resources.ts';
import { ApiError, badRequest, failure, notFound, pathNotFound, toError, unauthorized } from './status.ts';
import { ObjectStore } from './store.ts';
import type { OpenWatch } from './watch.ts';
import { parseResourceVersion, serveWatch } from './watch.ts';

export type { KubeObject, ObjectMeta, OwnerReference } from './objects.ts';
export type { Status } from './status.ts';

export interface FakeKubeApiOptions {
  /** CustomResourceDefinition objects (as parsed from infra/k8s/crds/*.yaml) whose resources the fake serves. */
  crds?: object[];
  /** How many resourceVersions a watch may start behind the newest before it answers 410 Gone (default: unlimited). */
  watchWindow?: number;
}

export interface RecordedCall {
  method: string;
  /** As sent, percent-encoding included, without the query. */
  path: string;
  /** The query string (`?watch=true&resourceVersion=7`), '' when there is none. */
  query: string;
  body: unknown;
  authorization: string | undefined;
  status: number;
}

export interface Refusal {
  method: string;
  path: string;
  code: number;
  reason: string;
  message: string;
}

export interface FakeKubeApi {
  url: string;
  /** A KubeConfig pointing at the fake, with token auth `Bearer t` (any other credential answers 401). */
  kubeConfig(): KubeConfig;
  calls: RecordedCall[];
  /** The first call at index `from` or later that matches; the test's timeout bounds the wait. */
  waitForCall(match: (c: RecordedCall) => boolean, from?: number): Promise<RecordedCall>;
  /** An object as stored (resourceVersion, uid, generation, creationTimestamp set), by its API path. */
  get(apiPath: string): KubeObject | undefined;
  /** The objects of a collection path (namespaced, or all namespaces). */
  list(collectionPath: string): KubeObject[];
  /** Makes every resourceVersion up to now too old: open watches end with a 410 ERROR event, exact lists answer 410. */
  expireHistory(): void;
  /** Runs before the fake answers each request. */
  onRequest(hook: (call: { method: string; path: string; body: unknown }) => void): void;
  close(): Promise<void>;

  // Beyond the agreed interface: what tests of the sandbox runtime (and others) need to play the cluster's part.
  /** The API paths of every stored object, sorted. */
  names(): string[];
  /** Resolves once the object at `apiPath` (undefined when absent) satisfies `predicate`. */
  waitForObject(apiPath: string, predicate: (object: KubeObject | undefined) => boolean): Promise<KubeObject | undefined>;
  /** A change a cluster component makes (a kubelet writing pod status): no checks, one MODIFIED event. */
  mutate(apiPath: string, change: (object: KubeObject) => void): KubeObject;
  /** Writes `status` as a cluster component would. */
  setStatus(apiPath: string, status: unknown): KubeObject;
  /** While set, a deleted pod stays Terminating (deletionTimestamp set) until `finishDeletion`, as with a kubelet. */
  holdPodDeletions(hold: boolean): void;
  finishDeletion(apiPath: string): void;
  /** The kubelet stats summary that `/api/v1/nodes/<node>/proxy/stats/summary` answers, by node name. */
  nodeStats: Map<string, unknown>;
  /** The next `method path` answers this Status instead. */
  refuseNext(refusal: Refusal): void;
  /** Sends a BOOKMARK to every open watch that allowed bookmarks. */
  bookmark(): void;
  /** The newest resourceVersion. */
  readonly revision: number;
}

export const FAKE_TOKEN = 't';

async function readBody(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`json: cannot unmarshal the request body: ${(error as Error).message}`);
  }
}

export async function startFakeKubeApi(options: FakeKubeApiOptions = {}): Promise<FakeKubeApi> {
  const types: ResourceType[] = [...BUILTIN_TYPES, ...(options.crds ?? []).flatMap(typesOfCrd)];
  const store = new ObjectStore(options.watchWindow);
  const calls: RecordedCall[] = [];
  const events = new EventEmitter();
  const hooks: Array<(call: { method: string; path: string; body: unknown }) => void> = [];
  const refusals: Refusal[] = [];
  const nodeStats = new Map<string, unknown>();
  const watches = new Set<OpenWatch>();

  function resolveObject(apiPath: string) {
    const found = route(types, apiPath);
    if (found?.kind !== 'resource' || !found.name) throw new Error(`${apiPath} is not the path of an object the fake serves`);
    return { type: found.type, namespace: found.namespace, name: found.name };
  }

  function answer(method: string, url: URL, contentType: string, body: unknown, response: http.ServerResponse): [number, unknown] | 'streaming' {
    const refusal = refusals.find((r) => r.method === method && r.path === url.pathname);
    if (refusal) {
      refusals.splice(refusals.indexOf(refusal), 1);
      throw failure(refusal.code, refusal.reason, refusal.message);
    }
    if (url.pathname === '/version') return [200, discovery(types, url.pathname)];
    const found = route(types, url.pathname);
    if (!found) throw pathNotFound();
    if (found.kind === 'discovery') return [200, discovery(types, found.path)];
    if (found.kind === 'nodeProxy') {
      if (method !== 'GET' || found.path !== 'stats/summary' || !nodeStats.has(found.node)) throw failure(404, 'NotFound', `nodes "${found.node}" not found`, { name: found.node, kind: 'nodes' });
      return [200, nodeStats.get(found.node)];
    }
    const query = url.searchParams;
    const watching = query.get('watch') === 'true' || query.get('watch') === '1' || found.legacyWatch;
    if (method === 'GET' && watching && !found.subresource) {
      if (found.name) query.set('fieldSelector', [`metadata.name=${found.name}`, query.get('fieldSelector')].filter(Boolean).join(','));
      const matches = selectorOf(query);
      parseResourceVersion(query.get('resourceVersion'));
      const timeout = query.get('timeoutSeconds');
      const opened: { watch?: OpenWatch } = {};
      opened.watch = serveWatch(store, {
        type: found.type, namespace: found.namespace, resourceVersion: query.get('resourceVersion'), matches,
        allowBookmarks: query.get('allowWatchBookmarks') === 'true', sendInitialEvents: query.get('sendInitialEvents') === 'true',
        timeoutSeconds: timeout ? Number(timeout) : undefined,
      }, response, () => watches.delete(opened.watch!));
      if (!response.writableEnded) watches.add(opened.watch);
      return 'streaming';
    }
    return handleResource(store, { method, type: found.type, namespace: found.namespace, name: found.name, subresource: found.subresource, query, contentType, body });
  }

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', 'http://fake');
    const call: RecordedCall = { method, path: url.pathname, query: url.search, body: undefined, authorization: request.headers.authorization, status: 0 };
    let result: [number, unknown] | 'streaming';
    try {
      call.body = await readBody(request);
      for (const hook of hooks) hook({ method, path: url.pathname, body: call.body });
      if (request.headers.authorization !== `Bearer ${FAKE_TOKEN}`) throw unauthorized();
      const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim();
      result = answer(method, url, contentType, call.body, response);
    } catch (error) {
      const apiError = toError(error);
      result = [apiError.code, apiError.status];
    }
    call.status = result === 'streaming' ? 200 : result[0];
    calls.push(call);
    if (result !== 'streaming') response.writeHead(result[0], { 'content-type': 'application/json' }).end(JSON.stringify(result[1]));
    events.emit('call', call);
  }

  const server = http.createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    calls,
    nodeStats,
    get revision() {
      return store.revision;
    },
    kubeConfig() {
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromOptions({
        clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
        users: [{ name: 'u', token: FAKE_TOKEN }],
        contexts: [{ name: 'c', cluster: 'fake', user: 'u' }],
        currentContext: 'c',
      });
      return kubeConfig;
    },
    waitForCall(match, from = 0) {
      const found = calls.slice(from).find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => {
        const listener = (call: RecordedCall) => {
          if (!match(call)) return;
          events.off('call', listener);
          resolve(call);
        };
        events.on('call', listener);
      });
    },
    get(apiPath) {
      const { type, namespace, name } = resolveObject(apiPath);
      return store.get(type, namespace, name);
    },
    list(collectionPath) {
      const found = route(types, collectionPath);
      if (found?.kind !== 'resource' || found.name) throw new Error(`${collectionPath} is not a collection the fake serves`);
      return store.list(found.type, found.namespace);
    },
    names: () => store.paths((type, object) => objectPath(type, object.metadata.namespace, object.metadata.name!)),
    waitForObject(apiPath, predicate) {
      const { type, namespace, name } = resolveObject(apiPath);
      const now = store.get(type, namespace, name);
      if (predicate(now)) return Promise.resolve(now);
      return new Promise((resolve) => {
        const unsubscribe = store.subscribe(() => {
          const object = store.get(type, namespace, name);
          if (!predicate(object)) return;
          unsubscribe();
          resolve(object);
        });
      });
    },
    mutate(apiPath, change) {
      const { type, namespace, name } = resolveObject(apiPath);
      return store.mutate(type, namespace, name, change);
    },
    setStatus(apiPath, status) {
      const { type, namespace, name } = resolveObject(apiPath);
      return store.mutate(type, namespace, name, (object) => {
        object.status = structuredClone(status);
      });
    },
    holdPodDeletions(hold) {
      store.holdPodDeletions = hold;
    },
    finishDeletion(apiPath) {
      const { type, namespace, name } = resolveObject(apiPath);
      store.finishDeletion(type, namespace, name);
    },
    refuseNext(refusal) {
      refusals.push(refusal);
    },
    bookmark() {
      for (const watch of watches) watch.bookmark();
    },
    expireHistory() {
      store.expire();
    },
    onRequest(hook) {
      hooks.push(hook);
    },
    async close() {
      for (const watch of [...watches]) watch.end();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export { ApiError, notFound };
