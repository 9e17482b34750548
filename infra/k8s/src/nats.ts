/**
 * NATS JetStream in the cluster: a StatefulSet of one node (local) or three (production, a JetStream cluster whose
 * streams can keep three replicas), each with a volume of its own. An overlay with `nats.mode: 'external'` renders
 * none of this and names an existing cluster by URL instead.
 */
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { labelsOf, RUN_AS, selectorOf } from './deployment.ts';
import { dnsEgress, NATS_CLIENT_PORT } from './network-policy.ts';
import type { Overlay } from './overlay.ts';

const NAME = 'nats';
const ROUTE_PORT = 6222;
const MONITOR_PORT = 8222;
const HEADLESS = 'nats-headless';

/** nats-server's configuration; `$POD_NAME` is expanded by the server from its environment. */
export function natsConfig(overlay: Overlay, replicas: number): string {
  const routes = Array.from({ length: replicas }, (_, index) => `nats://${NAME}-${index}.${HEADLESS}.${overlay.namespace}.svc:${ROUTE_PORT}`);
  const cluster = replicas > 1 ? [`cluster {`, `  name: sigil`, `  port: ${ROUTE_PORT}`, `  routes: [`, ...routes.map((route) => `    ${route}`), `  ]`, `}`] : [];
  return [`server_name: $POD_NAME`, `port: ${NATS_CLIENT_PORT}`, `http_port: ${MONITOR_PORT}`, `jetstream {`, `  store_dir: /data`, `}`, ...cluster, ''].join('\n');
}

export function natsObjects(overlay: Overlay) {
  if (overlay.nats.mode !== 'in-cluster') return [];
  const { replicas, image, storage, storageClass } = overlay.nats;
  const metadata = { name: NAME, namespace: overlay.namespace, labels: labelsOf(NAME, 'messaging') };
  const ports = [
    { name: 'client', containerPort: NATS_CLIENT_PORT, protocol: 'TCP' as const },
    { name: 'cluster', containerPort: ROUTE_PORT, protocol: 'TCP' as const },
    { name: 'monitor', containerPort: MONITOR_PORT, protocol: 'TCP' as const },
  ];
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({ httpGet: { path, port: 'monitor' }, periodSeconds, failureThreshold, timeoutSeconds: 3 });
  return [
    new ServiceAccount({ metadata, automountServiceAccountToken: false }),
    new ConfigMap({ metadata: { ...metadata, name: 'nats-config' }, data: { 'nats.conf': natsConfig(overlay, replicas) } }),
    new Service({
      metadata: { ...metadata, name: HEADLESS },
      spec: { clusterIP: 'None', publishNotReadyAddresses: true, selector: selectorOf(NAME), ports: ports.map(({ name, containerPort }) => ({ name, port: containerPort, targetPort: name })) },
    }),
    new Service({ metadata, spec: { selector: selectorOf(NAME), ports: [{ name: 'client', port: NATS_CLIENT_PORT, targetPort: 'client' }] } }),
    new StatefulSet({
      metadata,
      spec: {
        serviceName: HEADLESS,
        replicas,
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: selectorOf(NAME) },
        template: {
          metadata: { labels: labelsOf(NAME, 'messaging') },
          spec: {
            serviceAccountName: NAME,
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            terminationGracePeriodSeconds: 60,
            securityContext: { runAsNonRoot: true, runAsUser: RUN_AS, runAsGroup: RUN_AS, fsGroup: RUN_AS, seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: NAME,
                image,
                args: ['--config', '/etc/nats/nats.conf'],
                env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
                ports,
                resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
                startupProbe: probe('/healthz', 2, 60),
                livenessProbe: probe('/healthz?js-enabled-only=true', 10, 3),
                readinessProbe: probe('/healthz?js-server-only=true', 5, 3),
                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
                volumeMounts: [
                  { name: 'config', mountPath: '/etc/nats' },
                  { name: 'data', mountPath: '/data' },
                ],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: 'nats-config' } }],
          },
        },
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...(storageClass ? { storageClassName: storageClass } : {}) } },
        ],
      },
    }),
    new PodDisruptionBudget({ metadata, spec: { maxUnavailable: 1, selector: { matchLabels: selectorOf(NAME) } } }),
    new NetworkPolicy({
      metadata,
      spec: {
        podSelector: { matchLabels: selectorOf(NAME) },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          // Clients: the platform's pods that use NATS (their own policies limit them further).
          { from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/part-of': 'sigil' } } }], ports: [{ protocol: 'TCP' as const, port: NATS_CLIENT_PORT }] },
          { from: [{ podSelector: { matchLabels: selectorOf(NAME) } }], ports: [{ protocol: 'TCP' as const, port: ROUTE_PORT }] },
        ],
        egress: [dnsEgress, { to: [{ podSelector: { matchLabels: selectorOf(NAME) } }], ports: [{ protocol: 'TCP' as const, port: ROUTE_PORT }] }],
      },
    }),
  ];
}
