import type { CatalogDocument } from './catalog.ts';

/** A custom resource as the API server holds it. */
export interface CustomResource {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    deletionTimestamp?: string | Date;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [field: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Status;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export interface Status {
  phase?: string;
  message?: string;
  observedGeneration?: number;
  conditions?: Condition[];
  [field: string]: unknown;
}

/** kubectl's copy of the applied document: noise for the catalog, and it may hold the whole spec twice. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * The document the catalog is asked to apply: what `kubectl apply` sent, i.e. the object minus the fields the API
 * server owns (uid, resourceVersion, generation, timestamps, finalizers, managedFields, owner references) and minus
 * its status. The catalog validates it with the same schema the CRD was generated from.
 */
export function catalogDocument(object: CustomResource): object {
  const { name, namespace, labels, annotations } = object.metadata;
  const kept = annotations ? Object.fromEntries(Object.entries(annotations).filter(([key]) => key !== LAST_APPLIED)) : {};
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: { name, namespace, ...(labels && Object.keys(labels).length ? { labels } : {}), ...(Object.keys(kept).length ? { annotations: kept } : {}) },
    spec: object.spec ?? {},
  };
}

/**
 * The status to write for generation `generation` from the catalog's document: every field the catalog reports
 * (they share one schema), with `observedGeneration` in the cluster's numbering. The catalog counts generations of
 * its own; a condition it computed for its current generation was computed for the spec just applied, so it gets
 * the cluster's generation; an older one keeps no generation (there is no cluster generation to name).
 * Undefined while the catalog has not yet checked its current generation.
 */
export function statusFromCatalog(document: CatalogDocument, generation: number): Status | undefined {
  const status = (document.status ?? {}) as Status;
  const catalogGeneration = document.metadata.generation ?? 1;
  if (status.observedGeneration !== catalogGeneration || !status.conditions?.length) return undefined;
  const conditions = status.conditions.map(({ observedGeneration, ...condition }) => (observedGeneration === catalogGeneration ? { ...condition, observedGeneration: generation } : condition));
  return { ...status, observedGeneration: generation, conditions };
}

/** The condition a run or a resource is judged by: `Ready` for stores, policies and targets, `Succeeded` for runs. */
export function mainCondition(status: Status | undefined): Condition | undefined {
  return status?.conditions?.find((c) => c.type === 'Ready') ?? status?.conditions?.find((c) => c.type === 'Succeeded');
}

/**
 * The status of a generation the controller could not bring into the catalog (or out of it): Ready False with the
 * catalog's error as message. Other conditions the catalog reported earlier stay.
 */
export function failedStatus(previous: Status | undefined, generation: number, reason: string, message: string, now: Date): Status {
  return withCondition({ ...previous, phase: 'NotReady', message, observedGeneration: generation }, { type: 'Ready', status: 'False', reason, message, observedGeneration: generation }, now);
}

/** Ready Unknown while the catalog has not checked the generation just applied. */
export const PENDING_REASON = 'Reconciling';
export function pendingStatus(previous: Status | undefined, generation: number, now: Date): Status {
  const message = 'applied; waiting for the catalog to check it';
  return withCondition({ ...previous, phase: 'Pending', message, observedGeneration: generation }, { type: 'Ready', status: 'Unknown', reason: PENDING_REASON, message, observedGeneration: generation }, now);
}

/** Sets one condition as meta.SetStatusCondition does: the transition time moves only when its status changes. */
export function withCondition(status: Status, condition: Omit<Condition, 'lastTransitionTime'>, now: Date): Status {
  const conditions = [...(status.conditions ?? [])];
  const index = conditions.findIndex((c) => c.type === condition.type);
  const previous = index >= 0 ? conditions[index] : undefined;
  const next: Condition = {
    ...condition,
    message: (condition.message ?? '').slice(0, 4096),
    lastTransitionTime: previous?.status === condition.status && previous.lastTransitionTime ? previous.lastTransitionTime : now.toISOString(),
  };
  if (index >= 0) conditions[index] = next;
  else conditions.push(next);
  return { ...status, message: (status.message ?? '').slice(0, 4096), conditions };
}

/** JSON with sorted keys: equal statuses compare equal whatever their key order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}
