/**
 * One workload's objects: ServiceAccount, ConfigMap, Deployment, Service, PodDisruptionBudget and
 * HorizontalPodAutoscaler. Every pod runs as a non-root user on a read-only root filesystem, writes only to emptyDirs,
 * and mounts no service-account token unless it talks to the Kubernetes API.
 */
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { IVolume } from 'kubernetes-models/v1/Volume';
import type { IVolumeMount } from 'kubernetes-models/v1/VolumeMount';
import { imageOf, type Overlay } from './overlay.ts';
import { appliesTo, configMapOf, SETTINGS } from './settings/index.ts';
import { callersOf, HTTP_PORT, NODE_FLAGS, WORKLOAD_SPECS, type Workload } from './workloads.ts';

/** The uid and gid every platform container runs as (the image's `node` user is 1000; any non-root uid works). */
export const RUN_AS = 10001;

export const selectorOf = (workload: string) => ({ 'app.kubernetes.io/name': workload, 'app.kubernetes.io/instance': 'sigil' });
export const labelsOf = (workload: string, component: string) => ({ ...selectorOf(workload), 'app.kubernetes.io/part-of': 'sigil', 'app.kubernetes.io/component': component });

const componentOf = (workload: Workload) => (workload === 'gateway' ? 'edge' : workload === 'mover' ? 'worker' : workload === 'strata-controller' ? 'operator' : 'service');

/** A workload gets a Service when something calls it (the mover and the controller serve health endpoints only). */
export const hasService = (workload: Workload) => workload === 'gateway' || callersOf(workload).length > 0;

export const replicasOf = (overlay: Overlay, workload: Workload) => overlay.replicasOf?.[workload] ?? overlay.replicas;

/** The env of a workload's container: its ConfigMap whole, Secret keys and Downward API fields one by one. */
export function envOf(overlay: Overlay, workload: Workload): IEnvVar[] {
  return SETTINGS[workload].filter((setting) => appliesTo(setting, overlay)).flatMap((setting): IEnvVar[] => {
    const source = setting.source;
    if (source.kind === 'secret') {
      return [{ name: setting.name, valueFrom: { secretKeyRef: { name: source.secret, key: source.key, ...(source.optional ? { optional: true } : {}) } } }];
    }
    if (source.kind === 'field') return [{ name: setting.name, valueFrom: { fieldRef: { fieldPath: source.fieldPath } } }];
    return [];
  });
}

/** The ConfigMap's data: the plain settings this overlay sets. */
export function configDataOf(overlay: Overlay, workload: Workload): Record<string, string> {
  const data: Record<string, string> = {};
  for (const setting of SETTINGS[workload]) {
    if (setting.source.kind !== 'config' || !appliesTo(setting, overlay)) continue;
    const value = setting.source.value(overlay);
    if (value !== undefined) data[setting.name] = value;
  }
  return data;
}

function volumesOf(overlay: Overlay, workload: Workload): { volumes: IVolume[]; mounts: IVolumeMount[] } {
  const paths = WORKLOAD_SPECS[workload].writablePaths;
  const sizeLimit = workload === 'mover' ? overlay.moverScratch : '512Mi';
  return {
    volumes: paths.map((_, index) => ({ name: `scratch-${index}`, emptyDir: { sizeLimit } })),
    mounts: paths.map((mountPath, index) => ({ name: `scratch-${index}`, mountPath })),
  };
}

const memoryOf = (overlay: Overlay, mib: number) => `${Math.round(mib * overlay.memoryScale)}Mi`;

export function deploymentOf(overlay: Overlay, workload: Workload): Deployment {
  const spec = WORKLOAD_SPECS[workload];
  const { volumes, mounts } = volumesOf(overlay, workload);
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({ httpGet: { path, port: 'http' }, periodSeconds, failureThreshold, timeoutSeconds: 3 });
  return new Deployment({
    metadata: {
      name: workload,
      namespace: overlay.namespace,
      labels: labelsOf(workload, componentOf(workload)),
      annotations: { 'sigil.dev/summary': spec.summary, 'sigil.dev/memory-basis': spec.memory.basis },
    },
    spec: {
      // An autoscaled Deployment leaves its replica count to the HorizontalPodAutoscaler (an apply would reset it).
      ...(spec.scalesOut ? {} : { replicas: replicasOf(overlay, workload) }),
      revisionHistoryLimit: 5,
      selector: { matchLabels: selectorOf(workload) },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels: labelsOf(workload, componentOf(workload)) },
        spec: {
          serviceAccountName: workload,
          automountServiceAccountToken: spec.needsServiceAccountToken,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 30,
          securityContext: { runAsNonRoot: true, runAsUser: RUN_AS, runAsGroup: RUN_AS, fsGroup: RUN_AS, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: workload,
              image: imageOf(overlay),
              imagePullPolicy: overlay.image.pullPolicy,
              workingDir: '/app',
              command: ['node', ...NODE_FLAGS[workload], spec.entry],
              ports: [{ name: 'http', containerPort: HTTP_PORT, protocol: 'TCP' }],
              envFrom: [{ configMapRef: { name: configMapOf(workload) } }],
              env: envOf(overlay, workload),
              resources: {
                requests: { cpu: `${overlay.cpu.requestMillis}m`, memory: memoryOf(overlay, spec.memory.requestMiB) },
                limits: { cpu: `${overlay.cpu.limitMillis}m`, memory: memoryOf(overlay, spec.memory.limitMiB) },
              },
              // Boot applies pending migrations (none after the migrations Job) and connects to NATS: up to 2 minutes.
              startupProbe: probe('/healthz', 2, 60),
              livenessProbe: probe('/healthz', 10, 3),
              readinessProbe: probe('/readyz', 5, 2),
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: mounts,
            },
          ],
          volumes,
        },
      },
    },
  });
}

export function serviceAccountOf(overlay: Overlay, workload: Workload): ServiceAccount {
  return new ServiceAccount({
    metadata: { name: workload, namespace: overlay.namespace, labels: labelsOf(workload, componentOf(workload)) },
    automountServiceAccountToken: WORKLOAD_SPECS[workload].needsServiceAccountToken,
  });
}

export function configMapObjectOf(overlay: Overlay, workload: Workload): ConfigMap {
  return new ConfigMap({ metadata: { name: configMapOf(workload), namespace: overlay.namespace, labels: labelsOf(workload, 'config') }, data: configDataOf(overlay, workload) });
}

export function serviceOf(overlay: Overlay, workload: Workload): Service {
  const nodePort = workload === 'gateway' && overlay.exposure.kind === 'node-port' ? overlay.exposure.nodePort : undefined;
  return new Service({
    metadata: { name: workload, namespace: overlay.namespace, labels: labelsOf(workload, componentOf(workload)) },
    spec: {
      type: nodePort ? 'NodePort' : 'ClusterIP',
      selector: selectorOf(workload),
      ports: [{ name: 'http', port: HTTP_PORT, targetPort: 'http', protocol: 'TCP', ...(nodePort ? { nodePort } : {}) }],
    },
  });
}

/** One pod at a time may be evicted: with one replica a drain still proceeds. */
export function disruptionBudgetOf(overlay: Overlay, workload: Workload): PodDisruptionBudget {
  return new PodDisruptionBudget({
    metadata: { name: workload, namespace: overlay.namespace, labels: labelsOf(workload, componentOf(workload)) },
    spec: { maxUnavailable: 1, selector: { matchLabels: selectorOf(workload) } },
  });
}

export function autoscalerOf(overlay: Overlay, workload: Workload): HorizontalPodAutoscaler {
  const { minReplicas, maxReplicas, cpuUtilization } = overlay.autoscaling;
  return new HorizontalPodAutoscaler({
    metadata: { name: workload, namespace: overlay.namespace, labels: labelsOf(workload, componentOf(workload)) },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: workload },
      minReplicas: Math.max(minReplicas, replicasOf(overlay, workload)),
      maxReplicas: Math.max(maxReplicas, replicasOf(overlay, workload)),
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpuUtilization } } }],
    },
  });
}
