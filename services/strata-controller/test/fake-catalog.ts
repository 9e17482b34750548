import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small stand-in for Strata's resources API on loopback (POST /api/v1/resources, GET and DELETE
 * /api/v1/resources/{kind}/{ns}/{name}), for ordering and back-off cases. Like the catalog: a policy is Ready only
 * when its store exists, a target only when its policy does; the status is recomputed for every stored resource on
 * each apply or delete, with the catalog's own generation numbering. The real catalog is exercised by the e2e test.
 */
export interface FakeCatalog {
  url: string;
  token: string;
  /** Every request, in order: `POST BackupStore/default/local`, `GET …`, `DELETE …`. */
  requests: string[];
  /** When each of `requests` arrived (Date.now()). */
  requestTimes: number[];
  stored: Map<string, StoredDoc>;
  /** Answers the next `count` requests matching `match` with this status and error. */
  failNext(match: (request: string) => boolean, count: number, status: number, error: string): void;
  /**
   * Never answers the requests matching `match` (a hanging catalog); they end only when the client aborts them.
   * Answers a function that stops holding further requests.
   */
  hold(match: (request: string) => boolean): () => void;
  /** Held requests whose client gave up (aborted), by label. */
  aborted: string[];
  close(): Promise<void>;
}

interface StoredDoc {
  kind: string;
  metadata: { name: string; namespace: string; generation: number; labels?: Record<string, string> };
  spec: Record<string, unknown>;
  status: Record<string, unknown>;
}

const STORED = ['BackupStore', 'BackupPolicy', 'BackupTarget'];

export async function startFakeCatalog(): Promise<FakeCatalog> {
  const token = 'controller-token';
  const requests: string[] = [];
  const requestTimes: number[] = [];
  const stored = new Map<string, StoredDoc>();
  const failures: Array<{ match: (request: string) => boolean; left: number; status: number; error: string }> = [];
  const held: Array<(request: string) => boolean> = [];
  const aborted: string[] = [];

  const readyOf = (doc: StoredDoc): { ok: boolean; reason: string; message: string } => {
    const ns = doc.metadata.namespace;
    if (doc.kind === 'BackupPolicy' && !stored.has(`BackupStore/${ns}/${String(doc.spec.store)}`)) return { ok: false, reason: 'StoreNotFound', message: `store ${String(doc.spec.store)} not found` };
    if (doc.kind === 'BackupTarget' && !stored.has(`BackupPolicy/${ns}/${String(doc.spec.policy)}`)) return { ok: false, reason: 'PolicyNotFound', message: `policy ${String(doc.spec.policy)} not found` };
    return { ok: true, reason: 'Ready', message: 'checked' };
  };
  const recompute = () => {
    for (const doc of stored.values()) {
      const ready = readyOf(doc);
      doc.status = {
        phase: ready.ok ? 'Ready' : 'NotReady',
        message: ready.ok ? '' : ready.message,
        observedGeneration: doc.metadata.generation,
        conditions: [{ type: 'Ready', status: ready.ok ? 'True' : 'False', reason: ready.reason, message: ready.message, observedGeneration: doc.metadata.generation, lastTransitionTime: new Date().toISOString() }],
      };
    }
  };

  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers['cf-access-token'] !== token) return send(401, { error: 'no access token' });
    const url = new URL(req.url ?? '/', 'http://x');
    const body = req.method === 'POST' ? JSON.parse(await text(req)) : undefined;
    const label = req.method === 'POST' ? `POST ${body.kind}/${body.metadata.namespace}/${body.metadata.name}` : `${req.method} ${url.pathname.replace('/api/v1/resources/', '')}`;
    requests.push(label);
    requestTimes.push(Date.now());
    if (held.some((match) => match(label))) {
      res.on('close', () => aborted.push(label));
      return;
    }
    const failure = failures.find((f) => f.left > 0 && f.match(label));
    if (failure) {
      failure.left -= 1;
      return send(failure.status, { error: failure.error });
    }
    if (req.method === 'POST' && url.pathname === '/api/v1/resources') {
      if (!STORED.includes(body.kind)) return send(422, { error: `${body.kind} ${body.metadata.namespace}/${body.metadata.name}: not applied by this fake` });
      const key = `${body.kind}/${body.metadata.namespace}/${body.metadata.name}`;
      const existing = stored.get(key);
      const changed = !existing || JSON.stringify(existing.spec) !== JSON.stringify(body.spec);
      stored.set(key, { kind: body.kind, metadata: { ...body.metadata, generation: (existing?.metadata.generation ?? 0) + (changed ? 1 : 0) }, spec: body.spec, status: existing?.status ?? {} });
      recompute();
      return send(200, { applied: [{ kind: body.kind, namespace: body.metadata.namespace, name: body.metadata.name, action: existing ? (changed ? 'updated' : 'unchanged') : 'created' }], message: '1 resource(s) applied' });
    }
    const [kind = '', namespace = '', name = ''] = url.pathname.replace('/api/v1/resources/', '').split('/');
    const key = `${kind}/${namespace}/${name}`;
    const doc = stored.get(key);
    if (!doc) return send(404, { error: `${kind} ${namespace}/${name} was not found.` });
    if (req.method === 'GET') return send(200, { apiVersion: 'backups.strata.dev/v1alpha1', ...doc });
    stored.delete(key);
    recompute();
    return send(200, { message: `${kind} ${namespace}/${name} deleted.` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    requests,
    requestTimes,
    stored,
    aborted,
    hold(match) {
      held.push(match);
      return () => held.splice(held.indexOf(match), 1);
    },
    failNext(match, count, status, error) {
      failures.push({ match, left: count, status, error });
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // held requests included
      }),
  };
}

async function text(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
