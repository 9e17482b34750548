/**
 * What differs between the two deployments: an overlay is data, and `renderOverlay` is a function of it. `local` is a
 * developer's cluster (kind, minikube, k3d) beside the local stack's servers; `production` is the reference for a real
 * cluster. Operators copy `productionOverlay` and change the values, then render.
 */
import { HTTP_PORT, type Workload } from './workloads.ts';

export type NatsSettings =
  /** A NATS JetStream StatefulSet rendered with the platform: one node (local) or three (production). */
  | { mode: 'in-cluster'; replicas: 1 | 3; image: string; storage: string; storageClass?: string }
  /** An existing cluster, by URL (`nats://a:4222,nats://b:4222`). */
  | { mode: 'external'; url: string; port: number };

export type Exposure =
  /** An Ingress in front of the gateway's Service. */
  | { kind: 'ingress'; host: string; className: string; tlsSecretName?: string }
  /** A NodePort on the gateway's Service (a local cluster without an ingress controller). */
  | { kind: 'node-port'; nodePort: number };

export interface Overlay {
  name: 'local' | 'production';
  /** The platform's namespace. */
  namespace: string;
  /** One image holds the repository (services run by `node` from it, as on the local stack). */
  image: { registry: string; repository: string; tag: string; pullPolicy: 'Always' | 'IfNotPresent' | 'Never' };
  replicas: number;
  /** Horizontal autoscaling bounds of the services that scale out (the controller never does). */
  autoscaling: { minReplicas: number; maxReplicas: number; cpuUtilization: number };
  /** Multiplies the measured memory (workloads.ts): 1 in production, smaller on a laptop's cluster. */
  memoryScale: number;
  cpu: { requestMillis: number; limitMillis: number };
  nats: NatsSettings;
  /** External dependencies by URL. Credentials are in Secrets (settings.ts), never here. */
  postgres: { host: string; port: number };
  s3: { endpoint: string; region: string; pathStyle: boolean; buckets: { templates: string; envelopes: string; attachments: string; logos: string } };
  smtp: { host: string; port: number; from: string };
  /** Where the public reaches the gateway (links in e-mails, checkpoint origins). */
  publicUrl: string;
  exposure: Exposure;
  /** Where sandbox servers run (SANDBOX_NAMESPACE), a namespace the sandbox service's Role is bound in. */
  sandboxNamespace: string;
  sandboxStorageClass?: string;
  /** Namespaces the controller watches (empty: all, which needs a ClusterRole). */
  controllerWatchNamespaces: string[];
  logLevel: 'info' | 'debug' | 'warn';
  /** The access proxy in front of Strata's console API (its JWT issuer and key set); unset: Strata answers 401. */
  strataAccess?: { issuer: string; jwksUrl: string };
  /** The gateway's Strata dev issuer (`strata login` without an access proxy): local only. */
  strataDevIssuer: boolean;
  /** Plain-http receivers and identity providers allowed beside public https (WEBHOOK_/SSO_ALLOWED_ORIGINS). */
  localOrigins: string;
  /** The address range of the cluster's pods, left out of the "anywhere" egress of public dependencies. */
  clusterCidrs: string[];
  /** The mover's scratch space (MOVER_TEMP_DIR, an emptyDir): WAL and binlog segments, restores' downloads. */
  moverScratch: string;
  /** Services rendered with a different replica count. */
  replicasOf?: Partial<Record<Workload, number>>;
}

export const localOverlay: Overlay = {
  name: 'local',
  namespace: 'sigil',
  image: { registry: 'localhost:5001', repository: 'sigil-platform', tag: 'dev', pullPolicy: 'IfNotPresent' },
  replicas: 1,
  autoscaling: { minReplicas: 1, maxReplicas: 2, cpuUtilization: 80 },
  memoryScale: 1,
  cpu: { requestMillis: 50, limitMillis: 1000 },
  nats: { mode: 'in-cluster', replicas: 1, image: 'nats:2.11-alpine', storage: '1Gi' },
  // The local stack's servers on the developer's machine, as a kind or minikube cluster reaches them.
  postgres: { host: 'host.docker.internal', port: 5432 },
  s3: {
    endpoint: 'http://host.docker.internal:9000',
    region: 'us-east-1',
    pathStyle: true,
    buckets: { templates: 'sigil-templates', envelopes: 'sigil-envelopes', attachments: 'sigil-attachments', logos: 'sigil-logos' },
  },
  smtp: { host: 'host.docker.internal', port: 2525, from: 'Sigil <no-reply@sigil.local>' },
  publicUrl: 'http://localhost:30080',
  exposure: { kind: 'node-port', nodePort: 30080 },
  sandboxNamespace: 'strata-sandboxes',
  controllerWatchNamespaces: ['default'],
  logLevel: 'debug',
  strataDevIssuer: true,
  localOrigins: 'http://127.0.0.1:*,http://localhost:*',
  clusterCidrs: ['10.244.0.0/16'],
  moverScratch: '4Gi',
};

export const productionOverlay: Overlay = {
  name: 'production',
  namespace: 'sigil',
  image: { registry: 'registry.example.com/sigil', repository: 'sigil-platform', tag: '0.1.0', pullPolicy: 'IfNotPresent' },
  replicas: 2,
  autoscaling: { minReplicas: 2, maxReplicas: 6, cpuUtilization: 70 },
  memoryScale: 1,
  cpu: { requestMillis: 250, limitMillis: 2000 },
  nats: { mode: 'in-cluster', replicas: 3, image: 'nats:2.11-alpine', storage: '20Gi' },
  postgres: { host: 'postgres.example.internal', port: 5432 },
  s3: {
    endpoint: 'https://s3.eu-central-1.amazonaws.com',
    region: 'eu-central-1',
    pathStyle: false,
    buckets: { templates: 'sigil-templates', envelopes: 'sigil-envelopes', attachments: 'sigil-attachments', logos: 'sigil-logos' },
  },
  smtp: { host: 'smtp.example.com', port: 587, from: 'Sigil <no-reply@sigil.example.com>' },
  publicUrl: 'https://sigil.example.com',
  exposure: { kind: 'ingress', host: 'sigil.example.com', className: 'nginx', tlsSecretName: 'sigil-tls' },
  sandboxNamespace: 'strata-sandboxes',
  sandboxStorageClass: 'standard',
  controllerWatchNamespaces: ['strata'],
  logLevel: 'info',
  strataAccess: { issuer: 'https://sigil.cloudflareaccess.com', jwksUrl: 'https://sigil.cloudflareaccess.com/cdn-cgi/access/certs' },
  strataDevIssuer: false,
  localOrigins: '',
  clusterCidrs: ['10.0.0.0/8'],
  moverScratch: '50Gi',
  // One active controller; a second stands by for the Lease.
  replicasOf: { 'strata-controller': 2 },
};

export const OVERLAYS = { local: localOverlay, production: productionOverlay } as const;
export type OverlayName = keyof typeof OVERLAYS;

export const imageOf = (overlay: Overlay) => `${overlay.image.registry}/${overlay.image.repository}:${overlay.image.tag}`;

/** NATS_URL as every workload reads it. */
export function natsUrlOf(overlay: Overlay): string {
  if (overlay.nats.mode === 'external') return overlay.nats.url;
  return `nats://nats.${overlay.namespace}.svc:4222`;
}

/** A service's address inside the cluster (its Service, same namespace). */
export const serviceUrlOf = (overlay: Overlay, service: Workload) => `http://${service}.${overlay.namespace}.svc:${HTTP_PORT}`;
