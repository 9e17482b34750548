/**
 * `watch=true`: a chunked response kept open, one JSON event per line. From a resourceVersion it replays the history
 * after it (410 Gone as an ERROR event when that version is too old, as the watch cache answers); without one (or
 * with "0") it starts with an ADDED event per object. BOOKMARK events go to watches that allow them.
 */
import type http from 'node:http';
import type { KubeObject } from './objects.ts';
import type { ResourceType } from './resources.ts';
import { apiVersionOf, storageOf } from './resources.ts';
import type { Selector } from './selectors.ts';
import { badRequest, expired } from './status.ts';
import type { ObjectStore, StoredEvent } from './store.ts';

export interface WatchRequest {
  type: ResourceType;
  namespace: string | undefined;
  resourceVersion: string | null;
  matches: Selector;
  allowBookmarks: boolean;
  sendInitialEvents: boolean;
  timeoutSeconds: number | undefined;
}

export interface OpenWatch {
  bookmark(): void;
  end(): void;
}

type Line = { type: string; object: unknown };

/** Throws the 400 the API server answers before it starts streaming. */
export function parseResourceVersion(value: string | null): number | undefined {
  if (value === null || value === '' || value === '0') return undefined;
  if (!/^[0-9]+$/.test(value)) throw badRequest(`resourceVersion: Invalid value: "${value}": strconv.ParseUint: parsing "${value}": invalid syntax`);
  return Number(value);
}

/** The event a watch with this selector sees for a change: an object entering the selection is ADDED, leaving it DELETED. */
function translate(event: StoredEvent, matches: Selector): Line | undefined {
  const now = matches(event.object);
  const before = event.previous ? matches(event.previous) : false;
  if (event.type === 'ADDED') return now ? { type: 'ADDED', object: event.object } : undefined;
  if (event.type === 'DELETED') return before || now ? { type: 'DELETED', object: event.object } : undefined;
  if (now && before) return { type: 'MODIFIED', object: event.object };
  if (now) return { type: 'ADDED', object: event.object };
  return before ? { type: 'DELETED', object: event.object } : undefined;
}

/** Objects keep apiVersion and kind in watch events; the served version names them. */
function served(type: ResourceType, object: KubeObject): KubeObject {
  return { ...object, apiVersion: apiVersionOf(type), kind: type.kind };
}

export function serveWatch(store: ObjectStore, request: WatchRequest, response: http.ServerResponse, onEnd: () => void): OpenWatch {
  const { type, namespace, matches } = request;
  const from = parseResourceVersion(request.resourceVersion);
  response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private', 'transfer-encoding': 'chunked' });
  response.flushHeaders();
  let lastRevision = from ?? store.revision;
  let ended = false;
  const send = (line: Line) => {
    if (!ended) response.write(`${JSON.stringify(line)}\n`);
  };
  const inScope = (event: StoredEvent) => event.storage === storageOf(type) && (namespace === undefined || event.namespace === namespace);
  const deliver = (event: StoredEvent) => {
    lastRevision = event.revision;
    if (!inScope(event)) return;
    const line = translate(event, matches);
    if (line) send({ type: line.type, object: served(type, line.object as KubeObject) });
  };
  const bookmark = (annotations?: Record<string, string>) => {
    if (!request.allowBookmarks) return;
    send({ type: 'BOOKMARK', object: { kind: type.kind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: String(Math.max(lastRevision, store.revision)), ...(annotations ? { annotations } : {}) } } });
  };
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe = () => {};
  const end = () => {
    if (ended) return;
    ended = true;
    unsubscribe();
    if (timer) clearTimeout(timer);
    response.end();
    onEnd();
  };
  response.on('close', end);

  if (from !== undefined && from < store.oldestValid) {
    send({ type: 'ERROR', object: expired(from, store.oldestValid).status });
    end();
    return { bookmark: () => {}, end };
  }
  if (from === undefined) {
    for (const object of store.list(type, namespace).filter(matches)) send({ type: 'ADDED', object: served(type, object) });
    if (request.sendInitialEvents) bookmark({ 'k8s.io/initial-events-end': 'true' });
  } else {
    for (const event of store.history) if (event.revision > from) deliver(event);
  }
  unsubscribe = store.subscribe((signal) => {
    if (signal.kind === 'event') return deliver(signal.event);
    send({ type: 'ERROR', object: expired(lastRevision, store.oldestValid).status });
    end();
  });
  if (request.timeoutSeconds !== undefined) {
    timer = setTimeout(end, request.timeoutSeconds * 1000);
    timer.unref();
  }
  return { bookmark: () => bookmark(), end };
}
