/**
 * A fake Kubernetes API server on loopback: just the namespaced pods, services, secrets and claims the sandbox runtime
 * uses, plus the node proxy's stats summary. Objects live in memory; duplicates and missing objects answer the real
 * API's Status objects (409 AlreadyExists, 404 NotFound). Every call is recorded, and the test drives pod status.
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface RecordedCall {
  method: string;
  /** As sent, percent-encoding included. */
  path: string;
  body: unknown;
  authorization: string | undefined;
  status: number;
}

type KubeObject = { metadata: { name: string; namespace?: string; deletionTimestamp?: string; [key: string]: unknown }; [key: string]: unknown };
type Refusal = { method: string; path: string; code: number; reason: string; message: string };

const KINDS = ['pods', 'services', 'secrets', 'persistentvolumeclaims'] as const;
type Kind = (typeof KINDS)[number];
const NAMESPACED = /^\/api\/v1\/namespaces\/([^/]+)\/([a-z]+)(?:\/([^/]+))?$/;
const NODE_PROXY = /^\/api\/v1\/nodes\/([^/]+)\/proxy\/(.+)$/;

function statusObject(code: number, reason: string, message: string, details: Record<string, string> = {}) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code };
}

async function readBody(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

/** What the API server stores: a secret's stringData becomes base64 data, a new pod starts Pending. */
function stored(kind: Kind, namespace: string, body: KubeObject): KubeObject {
  const object: KubeObject = { ...body, metadata: { ...body.metadata, namespace, uid: `uid-${body.metadata.name}`, creationTimestamp: new Date().toISOString() } };
  if (kind === 'secrets' && object.stringData) {
    object.data = Object.fromEntries(Object.entries(object.stringData as Record<string, string>).map(([key, value]) => [key, Buffer.from(value).toString('base64')]));
    delete object.stringData;
  }
  if (kind === 'pods') object.status = { phase: 'Pending' };
  return object;
}

export async function startFakeKubeApi() {
  const objects = new Map<string, KubeObject>();
  const calls: RecordedCall[] = [];
  const events = new EventEmitter();
  const nodeStats = new Map<string, unknown>();
  const refusals: Refusal[] = [];
  /** When set, a deleted pod stays Terminating (deletionTimestamp set) until `finishDeletion`. */
  let holdPodDeletions = false;

  const key = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

  function answerObject(method: string, kind: Kind, namespace: string, name: string | undefined, body: unknown): [number, unknown] {
    if (method === 'POST' && !name) {
      const object = body as KubeObject;
      const id = key(kind, namespace, object.metadata.name);
      if (objects.has(id)) return [409, statusObject(409, 'AlreadyExists', `${kind} "${object.metadata.name}" already exists`, { name: object.metadata.name, kind })];
      objects.set(id, stored(kind, namespace, object));
      return [201, objects.get(id)];
    }
    const existing = name ? objects.get(key(kind, namespace, name)) : undefined;
    if (!name || !existing) return [404, statusObject(404, 'NotFound', `${kind} "${name}" not found`, { name: name ?? '', kind })];
    if (method === 'GET') return [200, existing];
    if (method !== 'DELETE') return [405, statusObject(405, 'MethodNotAllowed', `${method} is not supported here`)];
    if (kind === 'pods' && holdPodDeletions) {
      existing.metadata.deletionTimestamp ??= new Date().toISOString();
      return [200, existing];
    }
    objects.delete(key(kind, namespace, name));
    return [200, existing];
  }

  function answer(method: string, path: string, body: unknown): [number, unknown] {
    const refusal = refusals.find((r) => r.method === method && r.path === path);
    if (refusal) {
      refusals.splice(refusals.indexOf(refusal), 1);
      return [refusal.code, statusObject(refusal.code, refusal.reason, refusal.message)];
    }
    const proxied = NODE_PROXY.exec(path);
    if (method === 'GET' && proxied && decodeURIComponent(proxied[2]!) === 'stats/summary') {
      const stats = nodeStats.get(proxied[1]!);
      return stats ? [200, stats] : [404, statusObject(404, 'NotFound', `nodes "${proxied[1]}" not found`)];
    }
    const match = NAMESPACED.exec(path);
    if (!match || !KINDS.includes(match[2] as Kind)) return [404, statusObject(404, 'NotFound', 'the server could not find the requested resource')];
    return answerObject(method, match[2] as Kind, match[1]!, match[3], body);
  }

  const server = http.createServer((request, response) => {
    void readBody(request).then((body) => {
      const path = new URL(request.url ?? '/', 'http://fake').pathname;
      const [status, payload] = answer(request.method ?? 'GET', path, body);
      const call: RecordedCall = { method: request.method ?? 'GET', path, body, authorization: request.headers.authorization, status };
      calls.push(call);
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      events.emit('call', call);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    calls,
    nodeStats,
    object: (kind: Kind, namespace: string, name: string) => objects.get(key(kind, namespace, name)),
    names: () => [...objects.keys()].sort(),
    holdPodDeletions(hold: boolean) {
      holdPodDeletions = hold;
    },
    finishDeletion(namespace: string, name: string) {
      objects.delete(key('pods', namespace, name));
    },
    setPodStatus(namespace: string, name: string, status: Record<string, unknown>, nodeName = 'node-1') {
      const pod = objects.get(key('pods', namespace, name));
      if (!pod) throw new Error(`no pod ${namespace}/${name} in the fake`);
      pod.status = status;
      pod.spec = { ...(pod.spec as object), nodeName };
    },
    /** The next call to `method path` answers this Status instead. */
    refuseNext(refusal: Refusal) {
      refusals.push(refusal);
    },
    /** Resolves with the first call at index `after` or later that matches; the test's timeout bounds the wait. */
    waitForCall(matches: (call: RecordedCall) => boolean, after = 0): Promise<RecordedCall> {
      const found = calls.slice(after).find(matches);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => {
        const listener = (call: RecordedCall) => {
          if (!matches(call)) return;
          events.off('call', listener);
          resolve(call);
        };
        events.on('call', listener);
      });
    },
    kubeConfig(): KubeConfig {
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromOptions({
        clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
        users: [{ name: 'u', token: 't' }],
        contexts: [{ name: 'c', cluster: 'fake', user: 'u' }],
        currentContext: 'c',
      });
      return kubeConfig;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export type FakeKubeApi = Awaited<ReturnType<typeof startFakeKubeApi>>;
