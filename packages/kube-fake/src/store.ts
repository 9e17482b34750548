/**
 * The fake's etcd and the controllers that act on storage: one revision counter for every resource, a history of
 * every write (for watches from a resourceVersion and exact lists), optimistic concurrency, finalizers and deletion
 * timestamps, and the garbage collector of owner references (background, foreground, orphan). Everything runs
 * synchronously inside the request that caused it, so a test sees the settled state as soon as the answer arrives;
 * in a real cluster the garbage collector and the removal after the last finalizer happen a moment later.
 */
import type { KubeObject, OwnerReference } from './objects.ts';
import { checkFinalizers, prepareForCreate, prepareForStatusUpdate, prepareForUpdate, sameObject, timestamp } from './objects.ts';
import type { ResourceType } from './resources.ts';
import { storageOf } from './resources.ts';
import { applyDefaults, prune, validate } from './schema.ts';
import { alreadyExists, badRequest, conflict, invalid, notFound } from './status.ts';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  revision: number;
  type: EventType;
  storage: string;
  namespace: string | undefined;
  object: KubeObject;
  /** The object before a MODIFIED or DELETED, for selectors that an object enters or leaves. */
  previous?: KubeObject;
}

export type Propagation = 'Foreground' | 'Background' | 'Orphan';

export interface DeleteOptions {
  propagationPolicy?: Propagation;
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
}

interface Entry {
  type: ResourceType;
  object: KubeObject;
  /** A pod deleted gracefully: it stays Terminating until `finishDeletion` (the kubelet's confirmation). */
  graceful?: boolean;
}

export type StoreSignal = { kind: 'event'; event: StoredEvent } | { kind: 'expired' };

const FOREGROUND = 'foregroundDeletion';
const ORPHAN = 'orphan';
/** Bounds the settling loop: each round deletes or edits at least one object. */
const MAX_SETTLE_ROUNDS = 10_000;

/** A custom resource's body as the API server keeps it: pruned to the CRD's schema, defaults filled in. */
const conform = (type: ResourceType, body: KubeObject): KubeObject => (type.schema ? (applyDefaults(prune(body, type.schema, true), type.schema, true) as KubeObject) : body);

function checkSchema(type: ResourceType, object: KubeObject): void {
  if (!type.schema) return;
  const errors = validate(object, type.schema);
  if (errors.length) throw invalid(type, object.metadata.name ?? '', errors);
}

const keyOf = (type: ResourceType, namespace: string | undefined, name: string) => `${storageOf(type)}|${namespace ?? ''}|${name}`;
const clone = <T>(value: T): T => structuredClone(value);

export class ObjectStore {
  readonly history: StoredEvent[] = [];
  revision = 0;
  /** Watches (and exact lists) from a resourceVersion below this answer 410 Gone. */
  oldestValid = 0;
  holdPodDeletions = false;
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(signal: StoreSignal) => void>();
  private readonly watchWindow: number;

  constructor(watchWindow = Number.POSITIVE_INFINITY) {
    this.watchWindow = watchWindow;
  }

  subscribe(listener: (signal: StoreSignal) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every revision up to now becomes too old; the counter moves on, as other writes to etcd would move it. */
  expire(): void {
    this.revision++;
    this.oldestValid = this.revision;
    for (const listener of [...this.listeners]) listener({ kind: 'expired' });
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const entry = this.entries.get(keyOf(type, namespace, name));
    return entry ? clone(entry.object) : undefined;
  }

  /** Objects of a resource (in one namespace or all), as now or as they were at `revision`. */
  list(type: ResourceType, namespace: string | undefined, revision?: number): KubeObject[] {
    const storage = storageOf(type);
    const inScope = (s: string, ns: string | undefined) => s === storage && (namespace === undefined || ns === namespace);
    let objects: KubeObject[];
    if (revision === undefined) objects = [...this.entries.values()].filter((e) => inScope(storageOf(e.type), e.object.metadata.namespace)).map((e) => clone(e.object));
    else {
      const state = new Map<string, KubeObject>();
      for (const event of this.history) {
        if (event.revision > revision) break;
        if (!inScope(event.storage, event.namespace)) continue;
        const key = `${event.namespace ?? ''}|${event.object.metadata.name}`;
        if (event.type === 'DELETED') state.delete(key);
        else state.set(key, event.object);
      }
      objects = [...state.values()].map(clone);
    }
    const order = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    return objects.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
  }

  paths(describe: (type: ResourceType, object: KubeObject) => string): string[] {
    return [...this.entries.values()].map((e) => describe(e.type, e.object)).sort();
  }

  create(type: ResourceType, namespace: string | undefined, body: KubeObject): KubeObject {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the request body is not an object');
    if (body.metadata?.namespace && namespace !== undefined && body.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    // etcd3 store.Create refuses it (the status code is this fake's choice; the message is the API server's).
    if (body.metadata?.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
    const object = prepareForCreate(type, namespace, conform(type, body));
    const key = keyOf(type, namespace, object.metadata.name!);
    if (this.entries.has(key)) throw alreadyExists(type, object.metadata.name!);
    checkSchema(type, object);
    const stored = this.commit(key, { type, object }, 'ADDED');
    this.settle();
    return stored;
  }

  /** PUT of the object or of its status; `patch` answers for a body computed from the stored object. */
  update(type: ResourceType, namespace: string | undefined, name: string, body: KubeObject, options: { status?: boolean; patch?: boolean } = {}): KubeObject {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the request body is not an object');
    if (body.metadata?.name && body.metadata.name !== name) throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`);
    if (body.metadata?.namespace && namespace !== undefined && body.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const key = keyOf(type, namespace, name);
    const entry = this.entries.get(key);
    if (!entry) throw notFound(type, name);
    const current = entry.object;
    const requested = body.metadata?.resourceVersion;
    if (!requested && type.requireResourceVersionOnUpdate && !options.patch) {
      throw invalid(type, name, [{ field: 'metadata.resourceVersion', reason: 'FieldValueInvalid', detail: 'Invalid value: 0x0: must be specified for an update' }], true);
    }
    if (requested && requested !== current.metadata.resourceVersion) throw conflict(type, name);
    const conformed = conform(type, { ...body, metadata: body.metadata ?? {} });
    const next = options.status ? prepareForStatusUpdate(current, conformed) : prepareForUpdate(type, current, conformed);
    checkFinalizers(type, current, next);
    checkSchema(type, next);
    if (sameObject(next, current)) return clone(current);
    const stored = this.commit(key, { ...entry, object: next }, 'MODIFIED');
    this.settle();
    return stored;
  }

  /** A change made by a cluster component (the kubelet writing a pod's status): no checks, one MODIFIED event. */
  mutate(type: ResourceType, namespace: string | undefined, name: string, change: (object: KubeObject) => void): KubeObject {
    const key = keyOf(type, namespace, name);
    const entry = this.entries.get(key);
    if (!entry) throw notFound(type, name);
    const next = clone(entry.object);
    change(next);
    if (sameObject(next, entry.object)) return clone(entry.object);
    const stored = this.commit(key, { ...entry, object: next }, 'MODIFIED');
    this.settle();
    return stored;
  }

  /** `immediate` when the object went at once (no finalizers, no grace period): what decides the API's answer. */
  delete(type: ResourceType, namespace: string | undefined, name: string, options: DeleteOptions = {}): { object: KubeObject; immediate: boolean } {
    const key = keyOf(type, namespace, name);
    const entry = this.entries.get(key);
    if (!entry) throw notFound(type, name);
    const { uid, resourceVersion } = entry.object.metadata;
    const preconditions = options.preconditions ?? {};
    if (preconditions.uid && preconditions.uid !== uid) throw conflict(type, name, `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${uid}`);
    if (preconditions.resourceVersion && preconditions.resourceVersion !== resourceVersion) {
      throw conflict(type, name, `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${resourceVersion}`);
    }
    const wasDeleting = Boolean(entry.object.metadata.deletionTimestamp);
    const object = this.startDeletion(key, entry, options);
    const immediate = !wasDeleting && !this.entries.has(key);
    this.settle();
    return { object, immediate };
  }

  /** Ends a graceful pod deletion, as the kubelet does once the containers stopped. */
  finishDeletion(type: ResourceType, namespace: string | undefined, name: string): void {
    const entry = this.entries.get(keyOf(type, namespace, name));
    if (!entry) throw notFound(type, name);
    entry.graceful = false;
    this.settle();
  }

  private startDeletion(key: string, entry: Entry, options: DeleteOptions): KubeObject {
    const metadata = entry.object.metadata;
    if (metadata.deletionTimestamp) return clone(entry.object);
    const finalizers = [...(metadata.finalizers ?? [])];
    const policy = options.propagationPolicy ?? 'Background';
    if (policy === 'Foreground' && !finalizers.includes(FOREGROUND)) finalizers.push(FOREGROUND);
    if (policy === 'Orphan' && !finalizers.includes(ORPHAN)) finalizers.push(ORPHAN);
    const graceful = entry.type.plural === 'pods' && !entry.type.group && this.holdPodDeletions && options.gracePeriodSeconds !== 0;
    if (!finalizers.length && !graceful) return this.remove(key, entry);
    const next = clone(entry.object);
    next.metadata.deletionTimestamp = timestamp();
    next.metadata.deletionGracePeriodSeconds = graceful ? (options.gracePeriodSeconds ?? 30) : 0;
    if (finalizers.length) next.metadata.finalizers = finalizers;
    // rest.BeforeDelete: objects that track generation count the deletion as a change.
    if (next.metadata.generation) next.metadata.generation++;
    return this.commit(key, { ...entry, object: next, graceful }, 'MODIFIED');
  }

  private commit(key: string, entry: Entry, type: EventType): KubeObject {
    const previous = this.entries.get(key)?.object;
    this.revision++;
    entry.object.metadata.resourceVersion = String(this.revision);
    this.entries.set(key, entry);
    this.record({ revision: this.revision, type, storage: storageOf(entry.type), namespace: entry.object.metadata.namespace, object: clone(entry.object), ...(previous ? { previous: clone(previous) } : {}) });
    return clone(entry.object);
  }

  /** The object goes; watchers get it once more with the revision of its deletion. */
  private remove(key: string, entry: Entry): KubeObject {
    this.entries.delete(key);
    this.revision++;
    const last = clone(entry.object);
    last.metadata.resourceVersion = String(this.revision);
    this.record({ revision: this.revision, type: 'DELETED', storage: storageOf(entry.type), namespace: last.metadata.namespace, object: clone(last), previous: clone(entry.object) });
    return last;
  }

  private record(event: StoredEvent): void {
    this.history.push(event);
    if (Number.isFinite(this.watchWindow)) this.oldestValid = Math.max(this.oldestValid, this.revision - this.watchWindow);
    for (const listener of [...this.listeners]) listener({ kind: 'event', event });
  }

  private byUid(uid: string): Entry | undefined {
    for (const entry of this.entries.values()) if (entry.object.metadata.uid === uid) return entry;
    return undefined;
  }

  private setFinalizers(key: string, entry: Entry, finalizers: string[]): void {
    const next = clone(entry.object);
    if (finalizers.length) next.metadata.finalizers = finalizers;
    else delete next.metadata.finalizers;
    this.commit(key, { ...entry, object: next }, 'MODIFIED');
  }

  /** One step of what the garbage collector and the finalizer bookkeeping do; false once nothing is left to do. */
  private settleOnce(): boolean {
    for (const [key, entry] of this.entries) {
      const metadata = entry.object.metadata;
      if (metadata.deletionTimestamp && !metadata.finalizers?.length && !entry.graceful) {
        this.remove(key, entry);
        return true;
      }
      if (this.collectDependent(key, entry)) return true;
      if (metadata.deletionTimestamp && this.releaseOwner(key, entry)) return true;
    }
    return false;
  }

  /** A dependent whose owners are all gone is deleted; refs to gone or orphaning owners are dropped otherwise. */
  private collectDependent(key: string, entry: Entry): boolean {
    const references = entry.object.metadata.ownerReferences ?? [];
    if (!references.length) return false;
    const owners = references.map((ref) => ({ ref, owner: this.byUid(ref.uid) }));
    const orphaning = (o: Entry) => Boolean(o.object.metadata.deletionTimestamp && o.object.metadata.finalizers?.includes(ORPHAN));
    const solid = owners.filter(({ owner }) => owner && !orphaning(owner));
    const dropped = owners.filter(({ owner }) => !owner || orphaning(owner));
    if (!solid.length && dropped.every(({ owner }) => !owner)) {
      if (entry.object.metadata.deletionTimestamp) return false;
      this.startDeletion(key, entry, { propagationPolicy: 'Background' });
      return true;
    }
    if (dropped.length) {
      const next = clone(entry.object);
      next.metadata.ownerReferences = solid.map(({ ref }) => ref) as OwnerReference[];
      if (!next.metadata.ownerReferences.length) delete next.metadata.ownerReferences;
      this.commit(key, { ...entry, object: next }, 'MODIFIED');
      return true;
    }
    const foregroundOwner = solid.some(({ owner }) => owner!.object.metadata.deletionTimestamp && owner!.object.metadata.finalizers?.includes(FOREGROUND));
    if (foregroundOwner && !entry.object.metadata.deletionTimestamp) {
      // The collector deletes in the foreground only a dependent that has dependents of its own.
      const uid = entry.object.metadata.uid;
      const hasDependents = [...this.entries.values()].some((e) => e.object.metadata.ownerReferences?.some((ref) => ref.uid === uid));
      this.startDeletion(key, entry, { propagationPolicy: hasDependents ? 'Foreground' : 'Background' });
      return true;
    }
    return false;
  }

  /** An owner deleted in the foreground goes once its blocking dependents are gone; an orphaning one once none refers to it. */
  private releaseOwner(key: string, entry: Entry): boolean {
    const finalizers = entry.object.metadata.finalizers ?? [];
    const uid = entry.object.metadata.uid;
    const dependents = [...this.entries.values()].flatMap((e) => (e.object.metadata.ownerReferences ?? []).filter((ref) => ref.uid === uid));
    if (finalizers.includes(FOREGROUND) && !dependents.some((ref) => ref.blockOwnerDeletion)) {
      this.setFinalizers(key, entry, finalizers.filter((f) => f !== FOREGROUND));
      return true;
    }
    if (finalizers.includes(ORPHAN) && !dependents.length) {
      this.setFinalizers(key, entry, finalizers.filter((f) => f !== ORPHAN));
      return true;
    }
    return false;
  }

  private settle(): void {
    for (let round = 0; round < MAX_SETTLE_ROUNDS; round++) if (!this.settleOnce()) return;
    throw new Error('the fake API server did not settle: owner references in a cycle?');
  }
}
