/**
 * The REST verbs on a resource: list, get, create, update (PUT), patch, delete and deletecollection, on the object
 * or its `/status` subresource, with the API server's answers and status codes.
 */
import type { KubeObject } from './objects.ts';
import { applyPatch, PATCH_TYPES, PatchError } from './patch.ts';
import type { ResourceType } from './resources.ts';
import { apiVersionOf } from './resources.ts';
import type { Selector } from './selectors.ts';
import { fieldSelector, labelSelector } from './selectors.ts';
import { ApiError, badRequest, deleted, expired, failure, invalid, methodNotAllowed, notFound, pathNotFound } from './status.ts';
import type { DeleteOptions, ObjectStore, Propagation } from './store.ts';
import { parseResourceVersion } from './watch.ts';

export interface ResourceRequest {
  method: string;
  type: ResourceType;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  query: URLSearchParams;
  contentType: string;
  body: unknown;
}

export type Answer = [status: number, body: unknown];

export function selectorOf(query: URLSearchParams): Selector {
  const labels = labelSelector(query.get('labelSelector'));
  const fields = fieldSelector(query.get('fieldSelector'));
  return (object) => labels(object) && fields(object);
}

/** Built-in lists leave apiVersion and kind off their items; custom resource lists keep them. */
function listItem(type: ResourceType, object: KubeObject): KubeObject {
  if (type.custom) return { ...object, apiVersion: apiVersionOf(type), kind: type.kind };
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = object;
  return rest as KubeObject;
}

const CONTINUE_TOO_OLD = 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

function decodeContinue(token: string): { revision: number; start: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { rv?: unknown; start?: unknown };
    if (typeof parsed.rv === 'number' && typeof parsed.start === 'string') return { revision: parsed.rv, start: parsed.start };
  } catch {
    // Falls through to the API server's answer for a token it cannot read.
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

function list(store: ObjectStore, request: ResourceRequest): Answer {
  const { type, namespace, query } = request;
  const token = query.get('continue');
  const limit = Number(query.get('limit') ?? 0);
  let revision: number | undefined;
  let start = '';
  if (token) {
    ({ revision, start } = decodeContinue(token));
    if (revision < store.oldestValid) throw failure(410, 'Expired', CONTINUE_TOO_OLD);
  } else if (query.get('resourceVersionMatch') === 'Exact') {
    revision = parseResourceVersion(query.get('resourceVersion'));
    if (revision !== undefined && revision < store.oldestValid) throw expired(revision, store.oldestValid);
  }
  const matches = selectorOf(query);
  const all = store.list(type, namespace, revision).filter(matches);
  const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  const remaining = all.filter((o) => keyOf(o) > start);
  const page = limit > 0 ? remaining.slice(0, limit) : remaining;
  const listRevision = revision ?? store.revision;
  const more = page.length < remaining.length;
  const metadata = {
    resourceVersion: String(listRevision),
    ...(more ? { continue: Buffer.from(JSON.stringify({ rv: listRevision, start: keyOf(page.at(-1)!) })).toString('base64url'), remainingItemCount: remaining.length - page.length } : {}),
  };
  return [200, { kind: type.listKind, apiVersion: apiVersionOf(type), metadata, items: page.map((o) => listItem(type, o)) }];
}

function deleteOptionsOf(query: URLSearchParams, body: unknown): DeleteOptions {
  const fromBody = (body && typeof body === 'object' ? body : {}) as DeleteOptions & { orphanDependents?: boolean };
  const policy = (query.get('propagationPolicy') ?? fromBody.propagationPolicy ?? (fromBody.orphanDependents ? 'Orphan' : undefined)) as Propagation | undefined;
  if (policy && !['Foreground', 'Background', 'Orphan'].includes(policy)) throw badRequest(`propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
  const grace = query.get('gracePeriodSeconds') ?? fromBody.gracePeriodSeconds;
  return { ...(policy ? { propagationPolicy: policy } : {}), ...(fromBody.preconditions ? { preconditions: fromBody.preconditions } : {}), ...(grace !== undefined && grace !== null ? { gracePeriodSeconds: Number(grace) } : {}) };
}

const UNSUPPORTED_PATCH = (custom: boolean) =>
  failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${[PATCH_TYPES.json, PATCH_TYPES.merge, ...(custom ? [] : [PATCH_TYPES.strategic]), PATCH_TYPES.apply].join(', ')}`, {});

function patch(store: ObjectStore, request: ResourceRequest, name: string): Answer {
  const { type, namespace, contentType, query, body } = request;
  const isApply = contentType === PATCH_TYPES.apply;
  if ((contentType === PATCH_TYPES.strategic && type.custom) || !Object.values(PATCH_TYPES).includes(contentType as never)) throw UNSUPPORTED_PATCH(type.custom);
  if (isApply && !query.get('fieldManager')) {
    throw new ApiError({ ...invalid(type, '', []).status, message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', details: { group: 'meta.k8s.io', kind: 'PatchOptions', causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }] } });
  }
  const current = store.get(type, namespace, name);
  if (!current) {
    if (isApply && !request.subresource) return [201, store.create(type, namespace, { ...(body as KubeObject), metadata: { ...(body as KubeObject).metadata, name } })];
    throw notFound(type, name);
  }
  let patched: unknown;
  try {
    patched = applyPatch(contentType, current, body);
  } catch (error) {
    if (!(error instanceof PatchError)) throw error;
    throw failure(422, 'Invalid', 'the server rejected our request due to an error in our request', { causes: [{ reason: 'FieldValueInvalid', message: error.message, field: '' }] });
  }
  return [200, store.update(type, namespace, name, patched as KubeObject, { status: request.subresource === 'status', patch: true })];
}

function onObject(store: ObjectStore, request: ResourceRequest, name: string): Answer {
  const { method, type, namespace, subresource, body, query } = request;
  if (subresource !== undefined && !(subresource === 'status' && type.statusSubresource)) throw pathNotFound();
  switch (method) {
    case 'GET': {
      const object = store.get(type, namespace, name);
      if (!object) throw notFound(type, name);
      return [200, object];
    }
    case 'PUT': return [200, store.update(type, namespace, name, body as KubeObject, { status: subresource === 'status' })];
    case 'PATCH': return patch(store, request, name);
    case 'DELETE': {
      if (subresource) throw methodNotAllowed(method);
      const options = deleteOptionsOf(query, body);
      const { object, immediate } = store.delete(type, namespace, name, options);
      // A deletion that waits (finalizers, grace period) answers the object; 202 only when orphanDependents is false.
      const orphanFalse = (body as { orphanDependents?: boolean } | undefined)?.orphanDependents === false;
      if (!immediate) return [orphanFalse ? 202 : 200, object];
      return [200, type.returnsDeletedObject ? object : deleted(type, name, object.metadata.uid)];
    }
    default: throw methodNotAllowed(method);
  }
}

function onCollection(store: ObjectStore, request: ResourceRequest): Answer {
  const { method, type, namespace, body, query } = request;
  if (type.namespaced && namespace === undefined && method !== 'GET') throw methodNotAllowed(method);
  switch (method) {
    case 'GET': return list(store, request);
    case 'POST': return [201, store.create(type, namespace, body as KubeObject)];
    case 'DELETE': {
      const options = deleteOptionsOf(query, body);
      const gone = store.list(type, namespace).filter(selectorOf(query)).map((o) => store.delete(type, namespace, o.metadata.name!, options).object);
      return [200, { kind: type.listKind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: String(store.revision) }, items: gone.map((o) => listItem(type, o)) }];
    }
    default: throw methodNotAllowed(method);
  }
}

export function handleResource(store: ObjectStore, request: ResourceRequest): Answer {
  return request.name === undefined ? onCollection(store, request) : onObject(store, request, request.name);
}
