/**
 * What the API server fills in when it stores an object: identity and timestamps, and the defaults of the built-in
 * kinds that our code reads back (a secret's `stringData` kept as base64 `data`, a pod starting Pending, a service's
 * cluster IP, a claim starting Pending).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { ResourceType } from './resources.ts';
import { apiVersionOf } from './resources.ts';
import { invalid } from './status.ts';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** RFC 3339 with seconds, as metav1.Time serialises. */
export const timestamp = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The apiserver's generateName suffix: five characters from an alphabet without vowels. */
function nameSuffix(): string {
  return [...randomBytes(5)].map((byte) => NAME_ALPHABET[byte % NAME_ALPHABET.length]).join('');
}

export function nameFor(type: ResourceType, metadata: ObjectMeta): string {
  const name = metadata.name || (metadata.generateName ? `${metadata.generateName}${nameSuffix()}` : '');
  if (!name) throw invalid(type, '', [{ field: 'metadata.name', reason: 'FieldValueRequired', detail: 'Required value: name or generateName is required' }]);
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    throw invalid(type, name, [{
      field: 'metadata.name',
      reason: 'FieldValueInvalid',
      detail: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    }]);
  }
  return name;
}

let nextClusterIp = 10;
function clusterIp(): string {
  nextClusterIp++;
  return `10.96.${Math.floor(nextClusterIp / 250) % 250}.${(nextClusterIp % 250) + 1}`;
}

type Quantities = Record<string, string> | undefined;
type Container = { resources?: { requests?: Quantities; limits?: Quantities } };

/** The pod's QoS class as the API server computes it for cpu and memory. */
function qosClass(spec: { containers?: Container[] } | undefined): string {
  const containers = spec?.containers ?? [];
  const amounts = containers.map((c) => ({ requests: c.resources?.requests ?? {}, limits: c.resources?.limits ?? {} }));
  if (amounts.every((a) => !Object.keys(a.requests).length && !Object.keys(a.limits).length)) return 'BestEffort';
  const guaranteed = amounts.every((a) => ['cpu', 'memory'].every((r) => a.limits[r] && (a.requests[r] ?? a.limits[r]) === a.limits[r]));
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** A secret's `stringData` is written into `data` (base64) and never stored. */
function foldStringData(object: KubeObject): void {
  const stringData = object.stringData as Record<string, string> | undefined;
  if (!stringData) return;
  const data = { ...(object.data as Record<string, string> | undefined) };
  for (const [key, value] of Object.entries(stringData)) data[key] = Buffer.from(value).toString('base64');
  object.data = data;
  delete object.stringData;
}

function defaultBuiltin(type: ResourceType, object: KubeObject): void {
  if (type.custom) return;
  if (type.plural === 'secrets') {
    object.type ??= 'Opaque';
    foldStringData(object);
  }
  if (type.plural === 'namespaces') {
    object.spec = { finalizers: ['kubernetes'] };
    object.status = { phase: 'Active' };
  }
  if (type.plural === 'pods') object.status = { phase: 'Pending', qosClass: qosClass(object.spec as { containers?: Container[] }) };
  if (type.plural === 'persistentvolumeclaims') {
    object.spec = { volumeMode: 'Filesystem', ...(object.spec as object) };
    object.status = { phase: 'Pending' };
  }
  if (type.plural === 'services') {
    const spec: Record<string, unknown> = { type: 'ClusterIP', sessionAffinity: 'None', ...(object.spec as Record<string, unknown>) };
    if (spec.clusterIP !== 'None') spec.clusterIP ??= clusterIp();
    spec.clusterIPs ??= [spec.clusterIP];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
    spec.internalTrafficPolicy ??= 'Cluster';
    spec.ports = ((spec.ports as Array<Record<string, unknown>> | undefined) ?? []).map((p) => ({ protocol: 'TCP', ...p, targetPort: p.targetPort ?? p.port }));
    object.spec = spec;
    object.status = { loadBalancer: {} };
  }
}

/** The object a create stores: server-set metadata, no status for a custom resource with the status subresource. */
export function prepareForCreate(type: ResourceType, namespace: string | undefined, body: KubeObject): KubeObject {
  const name = nameFor(type, body.metadata ?? {});
  const object = structuredClone(body);
  const metadata: ObjectMeta = { ...object.metadata, name, ...(namespace !== undefined ? { namespace } : {}), uid: randomUUID(), creationTimestamp: timestamp() };
  for (const key of ['resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink', 'managedFields']) delete metadata[key];
  if (type.generation) metadata.generation = 1;
  else delete metadata.generation;
  Object.assign(object, { apiVersion: apiVersionOf(type), kind: type.kind, metadata });
  if (type.custom && type.statusSubresource) delete object.status;
  defaultBuiltin(type, object);
  return object;
}

const SERVER_OWNED = ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const;

/** Everything outside metadata (and outside status when status is a subresource): what bumps `generation`. */
function content(type: ResourceType, object: KubeObject): Record<string, unknown> {
  const { metadata: _metadata, status, ...rest } = object;
  return type.statusSubresource ? rest : { ...rest, status };
}

/**
 * The object an update of the main resource stores: server-owned metadata kept, status kept when it is a
 * subresource, generation bumped when the content changed.
 */
export function prepareForUpdate(type: ResourceType, current: KubeObject, body: KubeObject): KubeObject {
  const next = structuredClone(body);
  const metadata: ObjectMeta = { ...next.metadata };
  for (const key of SERVER_OWNED) {
    if (current.metadata[key] === undefined) delete metadata[key];
    else metadata[key] = current.metadata[key] as never;
  }
  Object.assign(next, { apiVersion: apiVersionOf(type), kind: type.kind, metadata });
  if (type.statusSubresource) {
    if (current.status === undefined) delete next.status;
    else next.status = structuredClone(current.status);
  }
  if (type.plural === 'secrets') foldStringData(next);
  if (type.generation && !isDeepStrictEqual(content(type, next), content(type, current))) metadata.generation = (current.metadata.generation ?? 0) + 1;
  return next;
}

/** A status write keeps everything but `status` as stored. */
export function prepareForStatusUpdate(current: KubeObject, body: KubeObject): KubeObject {
  const next = structuredClone(current);
  if (body.status === undefined) delete next.status;
  else next.status = structuredClone(body.status);
  return next;
}

/** Finalizers cannot be added once deletion started (metav1 validation). */
export function checkFinalizers(type: ResourceType, current: KubeObject, next: KubeObject): void {
  if (!current.metadata.deletionTimestamp) return;
  const added = (next.metadata.finalizers ?? []).filter((f) => !(current.metadata.finalizers ?? []).includes(f));
  if (!added.length) return;
  throw invalid(type, current.metadata.name ?? '', [{
    field: 'metadata.finalizers',
    reason: 'FieldValueForbidden',
    detail: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => `"${f}"`).join(', ')}}`,
  }]);
}

/** Equal but for resourceVersion: an update that changes nothing writes nothing. */
export function sameObject(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return isDeepStrictEqual(strip(a), strip(b));
}
