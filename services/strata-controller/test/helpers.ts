import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CoordinationV1Api, CustomObjectsApi, V1MicroTime, type KubeConfig } from '@kubernetes/client-node';
import YAML from 'yaml';
import type { CustomResource } from '../src/documents.ts';
import { GROUP, kindInfo, VERSION } from '../src/kinds.ts';

const CRD_DIR = path.resolve(import.meta.dirname, '../../../infra/k8s/crds');

/** The six CustomResourceDefinitions as `kubectl apply -f infra/k8s/crds` would install them. */
export function loadCrds(): object[] {
  return readdirSync(CRD_DIR)
    .filter((file) => file.startsWith(`${GROUP}_`) && file.endsWith('.yaml'))
    .map((file) => YAML.parse(readFileSync(path.join(CRD_DIR, file), 'utf8')) as object);
}

/** What a kubectl user does: create, change the spec of, and delete custom resources. */
export function kubectl(kubeConfig: KubeConfig) {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const at = (kind: string, namespace: string) => ({ group: GROUP, version: VERSION, plural: kindInfo(kind).plural, namespace });
  return {
    create: (doc: { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; spec: object }) => api.createNamespacedCustomObject({ ...at(doc.kind, doc.metadata.namespace), body: doc }) as Promise<CustomResource>,
    get: (kind: string, namespace: string, name: string) => api.getNamespacedCustomObject({ ...at(kind, namespace), name }) as Promise<CustomResource>,
    async setSpec(kind: string, namespace: string, name: string, spec: Record<string, unknown>) {
      const current = (await api.getNamespacedCustomObject({ ...at(kind, namespace), name })) as CustomResource;
      return api.replaceNamespacedCustomObject({ ...at(kind, namespace), name, body: { ...current, spec } }) as Promise<CustomResource>;
    },
    delete: (kind: string, namespace: string, name: string) => api.deleteNamespacedCustomObject({ ...at(kind, namespace), name }),
  };
}

/** Another process taking the controller's Lease (or `''`: giving it up) as a second replica would. */
export async function setLeaseHolder(kubeConfig: KubeConfig, namespace: string, name: string, holder: string, durationSeconds: number): Promise<void> {
  const api = kubeConfig.makeApiClient(CoordinationV1Api);
  // The controller renews the same Lease meanwhile: a write that loses that race (409) reads it again.
  for (let attempt = 1; ; attempt++) {
    const lease = await api.readNamespacedLease({ namespace, name });
    try {
      await api.replaceNamespacedLease({ namespace, name, body: { ...lease, spec: { ...lease.spec, holderIdentity: holder, leaseDurationSeconds: durationSeconds, renewTime: new V1MicroTime() } } });
      return;
    } catch (error) {
      if ((error as { code?: number }).code !== 409 || attempt >= 20) throw error;
    }
  }
}

/** Reads until `ready` holds (every 50 ms, for at most `ms`); answers the reading that did. */
export async function until<T>(what: string, read: () => T | Promise<T>, ready: (value: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ready(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${ms} ms; last: ${JSON.stringify(value)?.slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Ready=True for the object's current generation, as `kubectl wait --for=condition=Ready` sees it. */
export function isReady(object: CustomResource | undefined): boolean {
  if (!object) return false;
  const generation = object.metadata.generation ?? 1;
  const ready = object.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === generation && object.status?.observedGeneration === generation;
}

export const objectPath = (kind: string, namespace: string, name: string) => `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${kindInfo(kind).plural}/${name}`;
