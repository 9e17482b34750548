import type { Logger } from '@sigil/kit/log';
import { CatalogError, type Catalog, type CatalogDocument } from './catalog.ts';
import { canonical, catalogDocument, failedStatus, mainCondition, PENDING_REASON, pendingStatus, statusFromCatalog, type CustomResource, type Status } from './documents.ts';
import { FINALIZER, kindInfo, type KindInfo } from './kinds.ts';
import type { CustomObjects } from './kube.ts';

/** `done`: nothing more until the object changes (or the next resync); `retry`: again after a back-off. */
export type Outcome = 'done' | 'retry';

export interface ObjectRef {
  info: KindInfo;
  namespace: string;
  name: string;
}

export const keyOf = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

export function refOf(key: string): ObjectRef {
  const [kind = '', namespace = '', name = ''] = key.split('/');
  return { info: kindInfo(kind), namespace, name };
}

/** Thrown by a write this replica may no longer make (it lost the Lease meanwhile). */
export class NotLeaderError extends Error {}

export interface ReconcilerDeps {
  objects: CustomObjects;
  catalog: Catalog;
  /** Checked before every write, to the catalog or to the cluster (each attempt of a retried write too). */
  isLeader: () => boolean;
  /** Aborted when this replica loses the Lease (or stops): the catalog calls in flight end at once. */
  signal?: () => AbortSignal | undefined;
  log: Logger;
  now?: () => Date;
}

/**
 * One object's reconciliation: the finalizer first (stored kinds), then the document applied to the catalog exactly
 * as `POST /api/v1/resources` applies it, read back, and its status written through the status subresource. On a
 * deletion: the catalog deletes it (a target's replication slot is released there) and only then the finalizer goes.
 */
export function createReconciler(deps: ReconcilerDeps) {
  const { objects, catalog, log } = deps;
  const now = deps.now ?? (() => new Date());
  const guard = () => {
    if (!deps.isLeader()) throw new NotLeaderError('this replica does not hold the Lease');
  };
  const hasFinalizer = (object: CustomResource) => object.metadata.finalizers?.includes(FINALIZER) ?? false;
  const signal = () => deps.signal?.();

  /**
   * Per object: the last status written and the status the API server stored from it. The CRDs' status schemas
   * prune some of the catalog's fields (e.g. parts of a target's pitr), so the stored status never equals the one
   * computed; the same computed status over the same stored one is not written again (no event, no loop).
   */
  const lastWritten = new Map<string, { computed: string; stored: string }>();

  async function writeStatus(info: KindInfo, object: CustomResource, status: Status): Promise<void> {
    const generation = object.metadata.generation ?? 1;
    const key = keyOf(info.kind, object.metadata.namespace, object.metadata.name);
    const computed = canonical(status);
    const unchanged = (current: CustomResource) => {
      const stored = canonical(current.status ?? {});
      const last = lastWritten.get(key);
      return stored === computed || (last?.computed === computed && last.stored === stored);
    };
    guard();
    const written = await objects.update(
      info,
      object,
      // A newer generation has a reconcile of its own; an unchanged status is not written.
      (current) => ((current.metadata.generation ?? 1) !== generation || unchanged(current) ? undefined : { ...current, status }),
      'status',
      guard,
    );
    if (written) lastWritten.set(key, { computed, stored: canonical(written.status ?? {}) });
    else lastWritten.delete(key);
  }

  async function finalize(info: KindInfo, object: CustomResource): Promise<Outcome> {
    if (!hasFinalizer(object)) return 'done';
    const { namespace, name } = object.metadata;
    if (info.stored) {
      try {
        guard();
        const answer = await catalog.remove(info.kind, namespace, name, signal());
        // The catalog deletes the row first and answers 200 even when a target's replication slot could not be
        // released; its answer then names the SQL that drops it. The object is going: a warning is where it shows.
        if (answer && SLOT_NOT_RELEASED.test(answer)) log.warn({ kind: info.kind, namespace, name, answer }, 'deleted from the catalog, but its replication slot was not released: drop it on the server');
        else log.info({ kind: info.kind, namespace, name, answer: answer ?? 'the catalog did not have it' }, 'deleted from the catalog');
      } catch (error) {
        if (!(error instanceof CatalogError)) throw error;
        log.warn({ kind: info.kind, namespace, name, err: error.message }, 'the catalog did not delete it; the finalizer stays');
        await writeStatus(info, object, failedStatus(object.status, object.metadata.generation ?? 1, REASON.deleteFailed, error.message, now()));
        return 'retry';
      }
    }
    guard();
    lastWritten.delete(keyOf(info.kind, namespace, name));
    await objects.update(info, object, (current) => (hasFinalizer(current) ? { ...current, metadata: { ...current.metadata, finalizers: (current.metadata.finalizers ?? []).filter((f) => f !== FINALIZER) } } : undefined), 'object', guard);
    return 'done';
  }

  async function addFinalizer(info: KindInfo, object: CustomResource): Promise<CustomResource | undefined> {
    guard();
    return objects.update(
      info,
      object,
      (current) => (current.metadata.deletionTimestamp || hasFinalizer(current) ? undefined : { ...current, metadata: { ...current.metadata, finalizers: [...(current.metadata.finalizers ?? []), FINALIZER] } }),
      'object',
      guard,
    );
  }

  /**
   * A generation whose status the catalog already reported, and whose catalog copy has the same spec, is only read
   * again (resyncs, a new leader's catch-up): an apply makes the catalog check the resource and everything naming
   * it at once, which is its 5-minute recheck's job. A missing or different copy (deleted or changed behind the
   * controller's back) is applied again.
   */
  async function readIfCurrent(info: KindInfo, object: CustomResource): Promise<CatalogDocument | undefined> {
    const status = object.status;
    const reason = status?.conditions?.find((c) => c.type === 'Ready')?.reason ?? '';
    if (status?.observedGeneration !== (object.metadata.generation ?? 1) || CONTROLLER_REASONS.has(reason)) return undefined;
    const document = await catalog.get(info.kind, object.metadata.namespace, object.metadata.name, signal());
    const wanted = (catalogDocument(object) as { spec: unknown }).spec;
    return document && canonical(document.spec ?? {}) === canonical(wanted) ? document : undefined;
  }

  /** Applies (unless current), reads back, and answers the status to write and whether the catalog has settled. */
  async function applyToCatalog(info: KindInfo, object: CustomResource): Promise<{ status: Status; outcome: Outcome }> {
    const generation = object.metadata.generation ?? 1;
    const { namespace, name } = object.metadata;
    try {
      let document = await readIfCurrent(info, object);
      if (!document) {
        guard();
        await catalog.apply(catalogDocument(object), signal());
        document = await catalog.get(info.kind, namespace, name, signal());
      }
      const status = document && statusFromCatalog(document, generation);
      if (!status) return { status: pendingStatus(object.status, generation, now()), outcome: 'retry' };
      // Ready (or a finished run) is settled; NotReady and running runs are read again after a back-off.
      return { status, outcome: settled(info, status) ? 'done' : 'retry' };
    } catch (error) {
      if (!(error instanceof CatalogError)) throw error;
      log.warn({ kind: info.kind, namespace, name, status: error.status, err: error.message }, 'the catalog did not apply it');
      // 400: the document itself is invalid; only a new generation can fix it, and that comes as an event.
      return { status: failedStatus(object.status, generation, reasonOf(error), error.message, now()), outcome: error.status === 400 ? 'done' : 'retry' };
    }
  }

  return async function reconcile(ref: ObjectRef): Promise<Outcome> {
    const { info, namespace, name } = ref;
    let object = await objects.get(info, namespace, name);
    if (!object) return 'done';
    if (object.metadata.deletionTimestamp) return finalize(info, object);
    if (info.stored && !hasFinalizer(object)) {
      object = await addFinalizer(info, object);
      if (!object) return 'done';
      if (object.metadata.deletionTimestamp) return finalize(info, object);
    }
    const { status, outcome } = await applyToCatalog(info, object);
    await writeStatus(info, object, status);
    return outcome;
  };
}

/** The catalog's answer to a DELETE whose replication slot it could not drop (resource-admin.ts's wording). */
const SLOT_NOT_RELEASED = /could not be released/;

/** A stored resource is settled when Ready; a run when it finished (Succeeded True or False). */
function settled(info: KindInfo, status: Status): boolean {
  const condition = mainCondition(status)?.status;
  return info.stored ? condition === 'True' : condition === 'True' || condition === 'False';
}

/** Ready's reasons the controller writes itself (the catalog's own are in docs/strata-resources.md). */
const REASON = { unreachable: 'CatalogUnreachable', invalid: 'Invalid', denied: 'CatalogAccessDenied', unprocessable: 'Unprocessable', conflict: 'Conflict', failed: 'ApplyFailed', deleteFailed: 'DeleteFailed', pending: PENDING_REASON } as const;
const CONTROLLER_REASONS: ReadonlySet<string> = new Set(Object.values(REASON));

/** A word for Ready's reason from the catalog's answer. */
function reasonOf(error: CatalogError): string {
  if (error.status === 0) return REASON.unreachable;
  if (error.status === 400) return REASON.invalid;
  if (error.status === 401 || error.status === 403) return REASON.denied;
  if (error.status === 422) return REASON.unprocessable;
  if (error.status === 409) return REASON.conflict;
  return REASON.failed;
}

/** Whether an event about this object needs a reconcile (our own status writes do not). */
export function needsReconcile(info: KindInfo, object: CustomResource): boolean {
  if (object.metadata.deletionTimestamp) return true;
  if (info.stored && !object.metadata.finalizers?.includes(FINALIZER)) return true;
  return object.status?.observedGeneration !== (object.metadata.generation ?? 1);
}
