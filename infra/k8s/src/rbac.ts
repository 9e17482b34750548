/**
 * Roles of the two workloads that talk to the Kubernetes API, bound to their ServiceAccounts:
 * - sandbox (SANDBOX_RUNTIME=kubernetes, services/sandbox/src/runtime/kubernetes.ts): in the sandboxes namespace,
 *   the pods, secrets, services and persistentvolumeclaims it creates, reads and deletes; and, cluster-wide, `get`
 *   on `nodes/proxy` for the kubelet's stats summary (a sandbox's disk usage);
 * - strata-controller: the rules its owner wrote in controller-rbac.ts, in each watched namespace (a ClusterRole when
 *   it watches all), and its Lease in its own namespace.
 */
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import type { IPolicyRule } from 'kubernetes-models/rbac.authorization.k8s.io/v1/PolicyRule';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { controllerLeaseRules, controllerRules } from './controller-rbac.ts';
import { labelsOf } from './deployment.ts';
import type { Overlay } from './overlay.ts';

const RBAC = 'rbac.authorization.k8s.io';
const CONTROLLER = 'strata-controller';
/** The controller's LEASE_NAME (its default, left unset in settings). */
const CONTROLLER_LEASE = 'strata-controller';

/** Exactly the calls its runtime makes (a test reads them from services/sandbox/src/runtime and compares). */
export const sandboxRules: IPolicyRule[] = [
  // Services and claims go with the sandbox's Secret, which owns them; read and deleted by name only when an older
  // release left them without an owner.
  { apiGroups: [''], resources: ['pods', 'secrets', 'services', 'persistentvolumeclaims'], verbs: ['get', 'create', 'delete'] },
];
export const sandboxClusterRules: IPolicyRule[] = [{ apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] }];

const subjectOf = (overlay: Overlay, account: string) => [{ kind: 'ServiceAccount', name: account, namespace: overlay.namespace }];

function namespacedGrant(overlay: Overlay, account: string, name: string, namespace: string, rules: IPolicyRule[]) {
  const metadata = { name, namespace, labels: labelsOf(account, 'rbac') };
  return [new Role({ metadata, rules }), new RoleBinding({ metadata, roleRef: { apiGroup: RBAC, kind: 'Role', name }, subjects: subjectOf(overlay, account) })];
}

function clusterGrant(overlay: Overlay, account: string, name: string, rules: IPolicyRule[]) {
  const metadata = { name, labels: labelsOf(account, 'rbac') };
  return [new ClusterRole({ metadata, rules }), new ClusterRoleBinding({ metadata, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name }, subjects: subjectOf(overlay, account) })];
}

export function sandboxRbac(overlay: Overlay) {
  return [
    new Namespace({ metadata: { name: overlay.sandboxNamespace, labels: { 'app.kubernetes.io/part-of': 'sigil', 'pod-security.kubernetes.io/enforce': 'baseline' } } }),
    ...namespacedGrant(overlay, 'sandbox', 'strata-sandbox-runtime', overlay.sandboxNamespace, sandboxRules),
    ...clusterGrant(overlay, 'sandbox', `${overlay.namespace}-strata-sandbox-node-stats`, sandboxClusterRules),
  ];
}

export function controllerRbac(overlay: Overlay) {
  const resources =
    overlay.controllerWatchNamespaces.length === 0
      ? clusterGrant(overlay, CONTROLLER, `${overlay.namespace}-strata-controller`, controllerRules)
      : overlay.controllerWatchNamespaces.flatMap((namespace) => namespacedGrant(overlay, CONTROLLER, 'strata-controller', namespace, controllerRules));
  return [...resources, ...namespacedGrant(overlay, CONTROLLER, 'strata-controller-lease', overlay.namespace, controllerLeaseRules(CONTROLLER_LEASE))];
}
