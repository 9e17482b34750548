/**
 * NetworkPolicies: the namespace denies everything by default; each workload then accepts connections only from the
 * gateway and the services that call it (workloads.ts `calls`, from their `*_URL` settings), and opens only the
 * connections it makes: DNS, the services it calls, NATS, and its external dependencies by port.
 */
import type { INetworkPolicyEgressRule } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyEgressRule';
import type { INetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { labelsOf, selectorOf } from './deployment.ts';
import type { Overlay } from './overlay.ts';
import { callersOf, HTTP_PORT, WORKLOAD_SPECS, type Dependency, type Workload } from './workloads.ts';

export const NATS_CLIENT_PORT = 4222;
export const SANDBOX_SERVER_PORTS = [5432, 3306];
/** The API server answers on 443 through the `kubernetes` Service and on 6443 at the control plane's address. */
const KUBERNETES_API_PORTS = [443, 6443];

const tcp = (port: number) => ({ protocol: 'TCP' as const, port });
const podsOf = (workload: string): INetworkPolicyPeer => ({ podSelector: { matchLabels: selectorOf(workload) } });

/** Every pod of the namespace: nothing in or out unless a policy below allows it. */
export function defaultDenyPolicy(overlay: Overlay): NetworkPolicy {
  return new NetworkPolicy({
    metadata: { name: 'default-deny', namespace: overlay.namespace, labels: { 'app.kubernetes.io/part-of': 'sigil' } },
    spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] },
  });
}

export const dnsEgress: INetworkPolicyEgressRule = {
  to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
  ports: [{ protocol: 'UDP' as const, port: 53 }, tcp(53)],
};

const portOfUrl = (url: string) => {
  const parsed = new URL(url);
  return parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80;
};

/** The internet, not the cluster's own pods. */
const publicPeer = (overlay: Overlay): INetworkPolicyPeer => ({ ipBlock: { cidr: '0.0.0.0/0', except: overlay.clusterCidrs } });

/**
 * Egress to one dependency. Those named by URL (Postgres, S3, SMTP, an external NATS) may live in the cluster or out
 * of it, so they are opened by port to any address.
 */
export function dependencyEgress(overlay: Overlay, dependency: Dependency): INetworkPolicyEgressRule {
  switch (dependency) {
    case 'nats':
      return overlay.nats.mode === 'in-cluster' ? { to: [podsOf('nats')], ports: [tcp(NATS_CLIENT_PORT)] } : { ports: [tcp(overlay.nats.port)] };
    case 'postgres':
      return { ports: [tcp(overlay.postgres.port)] };
    case 's3':
      return { ports: [tcp(portOfUrl(overlay.s3.endpoint))] };
    case 'smtp':
      return { ports: [tcp(overlay.smtp.port)] };
    case 'public-https':
      return { to: [publicPeer(overlay)], ports: [tcp(443)] };
    case 'kubernetes-api':
      return { ports: KUBERNETES_API_PORTS.map(tcp) };
    case 'sandbox-pods':
      return { to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': overlay.sandboxNamespace } } }], ports: SANDBOX_SERVER_PORTS.map(tcp) };
    case 'anywhere':
      return {};
  }
}

export function networkPolicyOf(overlay: Overlay, workload: Workload): NetworkPolicy {
  const spec = WORKLOAD_SPECS[workload];
  const callers = callersOf(workload);
  // The gateway is the public edge: the ingress controller (or a NodePort) reaches it from outside the namespace.
  const ingress =
    workload === 'gateway'
      ? [{ ports: [tcp(HTTP_PORT)] }]
      : callers.length > 0
        ? [{ from: callers.map(podsOf), ports: [tcp(HTTP_PORT)] }]
        : [];
  const egress: INetworkPolicyEgressRule[] = [
    dnsEgress,
    ...(spec.calls.length > 0 ? [{ to: spec.calls.map(podsOf), ports: [tcp(HTTP_PORT)] }] : []),
    ...spec.dependencies.map((dependency) => dependencyEgress(overlay, dependency)),
  ];
  return new NetworkPolicy({
    metadata: { name: workload, namespace: overlay.namespace, labels: labelsOf(workload, 'network') },
    spec: { podSelector: { matchLabels: selectorOf(workload) }, policyTypes: ['Ingress', 'Egress'], ingress, egress },
  });
}
