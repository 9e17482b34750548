// What the strata-controller may do in the cluster: the least its code uses (services/strata-controller/src).
// Owned with the controller; the manifests render these rules into Role/ClusterRole objects and their bindings.
import type { IPolicyRule } from 'kubernetes-models/rbac.authorization.k8s.io/v1/PolicyRule';

export const STRATA_GROUP = 'backups.strata.dev';

/** The plurals of the six custom resources (infra/k8s/crds). */
export const STRATA_PLURALS = ['backupstores', 'backuppolicies', 'backuptargets', 'backups', 'restores', 'sandboxes'] as const;

/**
 * On the custom resources, in every watched namespace (a Role per namespace, or a ClusterRole when it watches all):
 * - get, list, watch: the informers and the read before each reconcile;
 * - update: adding and removing its finalizer (a PUT carrying the resourceVersion read; no patch is sent);
 * - update on `/status`: phase, conditions and observedGeneration through the status subresource.
 * No create or delete: kubectl users create and delete the resources; the controller only finalizes them. The
 * `/finalizers` subresource is not needed: it only guards owner references with blockOwnerDeletion, which the
 * controller never sets. No events are emitted, so no rule for them.
 */
export const controllerRules: IPolicyRule[] = [
  { apiGroups: [STRATA_GROUP], resources: [...STRATA_PLURALS], verbs: ['get', 'list', 'watch', 'update'] },
  { apiGroups: [STRATA_GROUP], resources: STRATA_PLURALS.map((plural) => `${plural}/status`), verbs: ['update'] },
];

/**
 * On its Lease, in its own namespace only (always a Role): create the first time (create cannot be limited to a
 * name), then get and update that one Lease by name.
 */
export function controllerLeaseRules(leaseName: string): IPolicyRule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [leaseName], verbs: ['get', 'update'] },
  ];
}
