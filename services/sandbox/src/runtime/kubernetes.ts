/**
 * The Kubernetes runtime: each sandbox is a Secret, a Pod and a ClusterIP Service named `strata-sbx-<id>` in one
 * namespace (kubernetes-objects.ts has the manifests). The stored state names the objects (`dir` is
 * `<namespace>/<name>`) and the service's cluster DNS name, so whatever connects to a sandbox runs in the cluster.
 *
 * Data: without a storage class the data volume is an `emptyDir` (its `sizeLimit` makes the kubelet evict a pod that
 * outgrows it), and `stop` loses the data. With a storage class it is a claim of its own, sized to the sandbox's limit,
 * which `stop` keeps: `start` with the previous state creates the pod again on the same data.
 *
 * Clean-up: the Secret owns the pod, the service and the claim. `stop` deletes the pod only; `wipe` deletes the Secret
 * and Kubernetes' garbage collector deletes the rest (in the background, moments later); objects of an earlier
 * runtime version, which have no owner reference, are deleted by name.
 *
 * Usage: the core API has no volume usage; `usedBytes` reads the kubelet's stats summary through the API server's node
 * proxy (which needs `get` on `nodes/proxy`) and answers 0 whenever that is unavailable. Only the size limit of an
 * `emptyDir` is then enforced, by the kubelet.
 */
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { V1OwnerReference, V1Pod } from '@kubernetes/client-node';
import type { ObjectSettings } from './kubernetes-objects.ts';
import { claimManifest, claimName, DATA_VOLUME, defaultImage, objectName, ownerReference, podManifest, secretManifest, SERVER_PORTS, serviceManifest } from './kubernetes-objects.ts';
import type { RuntimeState, SandboxRuntime, ServerSpec } from './types.ts';

export interface KubernetesRuntimeOptions {
  /** Defaults to `loadFromDefault()`: `$KUBECONFIG`, `~/.kube/config`, else the pod's service account. */
  kubeConfig?: KubeConfig;
  namespace: string;
  images?: { postgres?: (major: number) => string; mysql?: string };
  /** A claim of this class holds each sandbox's data instead of the node's scratch space. */
  storageClass?: string;
  /** The data volume's size: an `emptyDir`'s `sizeLimit`, or the claim's request (10Gi when undefined). */
  sizeLimitBytes?: (spec: ServerSpec) => number | undefined;
  /** Kubernetes quantities (`500m`, `1Gi`), used as both request and limit. */
  cpu?: string;
  memory?: string;
  /** How long `start` waits for the pod to be Ready, image pull included. */
  readyTimeoutMs?: number;
  pollMs?: number;
}

/** Container states Kubernetes keeps retrying without a chance of success on their own. */
const STUCK_REASONS = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'CreateContainerConfigError', 'CreateContainerError']);

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function apiMessage(error: ApiException<unknown>): string {
  try {
    const status = (typeof error.body === 'string' ? JSON.parse(error.body) : error.body) as { message?: string } | undefined;
    if (status?.message) return status.message;
  } catch {
    // Not a Status object: the HTTP code is all there is.
  }
  return `HTTP ${error.code}`;
}

/** Runs one API call; the listed HTTP codes answer undefined, other API errors become a readable Error. */
async function kubeCall<T>(action: string, call: () => Promise<T>, tolerated: number[] = []): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    if (tolerated.includes(error.code)) return undefined;
    throw new Error(`Kubernetes refused to ${action}: ${apiMessage(error)}`, { cause: error });
  }
}

function isReady(pod: V1Pod): boolean {
  return !pod.metadata?.deletionTimestamp && (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Why the pod will not become Ready by itself, in Kubernetes' words; undefined while it still may. */
export function podFailure(pod: V1Pod): string | undefined {
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return [pod.status?.reason, pod.status?.message].filter(Boolean).join(': ') || `the pod ended (${phase})`;
  for (const container of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const waiting = container.state?.waiting;
    if (!waiting?.reason || !STUCK_REASONS.has(waiting.reason)) continue;
    const exited = container.lastState?.terminated;
    const detail = exited ? `the server exited with code ${exited.exitCode}${exited.message ? `: ${exited.message}` : exited.reason ? ` (${exited.reason})` : ''}` : waiting.message;
    return detail ? `${waiting.reason}: ${detail}` : waiting.reason;
  }
  return undefined;
}

function describePod(pod: V1Pod): string {
  const waiting = pod.status?.containerStatuses?.find((c) => c.state?.waiting)?.state?.waiting;
  return `phase ${pod.status?.phase ?? 'unknown'}${waiting?.reason ? `, ${waiting.reason}` : ''}`;
}

function locate(state: RuntimeState): { namespace: string; name: string } {
  const [namespace, name] = state.dir.split('/');
  if (!namespace || !name) throw new Error(`the runtime state ${state.dir} does not name Kubernetes objects`);
  return { namespace, name };
}

interface NodeStats {
  pods?: Array<{ podRef?: { name?: string; namespace?: string }; volume?: Array<{ name?: string; usedBytes?: number }> }>;
}

function defaultKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
}

export function createKubernetesRuntime(options: KubernetesRuntimeOptions): SandboxRuntime {
  const core = (options.kubeConfig ?? defaultKubeConfig()).makeApiClient(CoreV1Api);
  const readyTimeoutMs = options.readyTimeoutMs ?? 300_000;
  const pollMs = options.pollMs ?? 2000;

  function settingsOf(spec: ServerSpec): ObjectSettings {
    const image = spec.engine === 'postgres' ? options.images?.postgres?.(spec.major) : options.images?.mysql;
    const sizeLimitBytes = options.sizeLimitBytes?.(spec);
    return {
      image: image ?? defaultImage(spec),
      ...(options.storageClass ? { storageClass: options.storageClass } : {}),
      ...(sizeLimitBytes ? { sizeLimitBytes } : {}),
      ...(options.cpu ? { cpu: options.cpu } : {}),
      ...(options.memory ? { memory: options.memory } : {}),
    };
  }

  async function readPod(namespace: string, name: string): Promise<V1Pod | undefined> {
    return await kubeCall(`read the pod ${namespace}/${name}`, () => core.readNamespacedPod({ namespace, name }), [404]);
  }

  /**
   * 409 means the objects exist (a start that stopped half-way, or a restart): they are adopted as they are. Answers
   * the reference to the Secret, which owns the other objects.
   */
  async function ensureSupportObjects(namespace: string, spec: ServerSpec, settings: ObjectSettings): Promise<V1OwnerReference> {
    const name = objectName(spec.id);
    const secret = (await kubeCall(`create the secret ${namespace}/${name}`, () => core.createNamespacedSecret({ namespace, body: secretManifest(spec) }), [409]))
      ?? (await kubeCall(`read the secret ${namespace}/${name}`, () => core.readNamespacedSecret({ namespace, name })));
    const owner = ownerReference(secret ?? {});
    const { storageClass } = settings;
    if (storageClass) await kubeCall(`create the claim ${namespace}/${claimName(name)}`, () => core.createNamespacedPersistentVolumeClaim({ namespace, body: claimManifest(spec, { ...settings, storageClass }, owner) }), [409]);
    await kubeCall(`create the service ${namespace}/${name}`, () => core.createNamespacedService({ namespace, body: serviceManifest(spec, owner) }), [409]);
    return owner;
  }

  /**
   * A pod deleted by `stop` keeps its name until it has terminated; the new one is created once it is gone. Tried at
   * least once, also when creating the other objects used up the time.
   */
  async function ensurePod(namespace: string, spec: ServerSpec, settings: ObjectSettings, owner: V1OwnerReference, deadline: number): Promise<void> {
    const name = objectName(spec.id);
    for (;;) {
      const created = await kubeCall(`create the pod ${namespace}/${name}`, () => core.createNamespacedPod({ namespace, body: podManifest(spec, settings, owner) }), [409]);
      if (created) return;
      const existing = await readPod(namespace, name);
      if (existing && !existing.metadata?.deletionTimestamp) return;
      if (Date.now() >= deadline) throw new Error(`the previous pod ${namespace}/${name} did not terminate within ${readyTimeoutMs / 1000}s`);
      await delay(pollMs);
    }
  }

  /** Polls the pod until it is ready; the pod is read at least once, also when creating it used up the time. */
  async function waitUntilReady(namespace: string, name: string, deadline: number): Promise<void> {
    for (;;) {
      const pod = await readPod(namespace, name);
      if (!pod) throw new Error(`the pod ${namespace}/${name} was deleted while it started`);
      if (isReady(pod)) return;
      const failure = podFailure(pod);
      if (failure) throw new Error(`the pod ${namespace}/${name} failed: ${failure}`);
      if (Date.now() >= deadline) throw new Error(`the pod ${namespace}/${name} was not ready within ${readyTimeoutMs / 1000}s (${describePod(pod)})`);
      await delay(pollMs);
    }
  }

  /**
   * Deletes the owner; the garbage collector deletes the pod, service and claim it owns. Objects without an owner
   * reference (made by a runtime version before the Secret owned them, and adopted as they were on a 409) are
   * deleted by name; what is gone already is fine.
   */
  async function deleteAll(namespace: string, name: string): Promise<void> {
    await kubeCall(`delete the secret ${namespace}/${name}`, () => core.deleteNamespacedSecret({ namespace, name, propagationPolicy: 'Background' }), [404]);
    const unowned = (object: { metadata?: { ownerReferences?: unknown[] } } | undefined) => object !== undefined && !object.metadata?.ownerReferences?.length;
    const pod = await readPod(namespace, name);
    if (unowned(pod)) await kubeCall(`delete the pod ${namespace}/${name}`, () => core.deleteNamespacedPod({ namespace, name }), [404]);
    const service = await kubeCall(`read the service ${namespace}/${name}`, () => core.readNamespacedService({ namespace, name }), [404]);
    if (unowned(service)) await kubeCall(`delete the service ${namespace}/${name}`, () => core.deleteNamespacedService({ namespace, name }), [404]);
    const claim = claimName(name);
    const volume = await kubeCall(`read the claim ${namespace}/${claim}`, () => core.readNamespacedPersistentVolumeClaim({ namespace, name: claim }), [404]);
    if (unowned(volume)) await kubeCall(`delete the claim ${namespace}/${claim}`, () => core.deleteNamespacedPersistentVolumeClaim({ namespace, name: claim }), [404]);
  }

  async function start(spec: ServerSpec, previous?: RuntimeState): Promise<RuntimeState> {
    const { namespace, name } = previous ? locate(previous) : { namespace: options.namespace, name: objectName(spec.id) };
    const settings = settingsOf(spec);
    const deadline = Date.now() + readyTimeoutMs;
    try {
      const owner = await ensureSupportObjects(namespace, spec, settings);
      await ensurePod(namespace, spec, settings, owner, deadline);
      await waitUntilReady(namespace, name, deadline);
    } catch (error) {
      // Nothing records a first start that failed, so nothing else would ever delete its objects.
      if (!previous) await deleteAll(namespace, name).catch(() => undefined);
      throw error;
    }
    return { engine: spec.engine, dir: `${namespace}/${name}`, host: `${name}.${namespace}.svc`, port: SERVER_PORTS[spec.engine] };
  }

  async function usedBytes(state: RuntimeState): Promise<number> {
    try {
      const { namespace, name } = locate(state);
      const node = (await readPod(namespace, name))?.spec?.nodeName;
      if (!node) return 0;
      const answer: unknown = await core.connectGetNodeProxyWithPath({ name: node, path: 'stats/summary' });
      const stats = (typeof answer === 'string' ? JSON.parse(answer) : answer) as NodeStats;
      const pod = stats.pods?.find((p) => p.podRef?.name === name && p.podRef.namespace === namespace);
      return pod?.volume?.find((v) => v.name === DATA_VOLUME)?.usedBytes ?? 0;
    } catch {
      return 0;
    }
  }

  return {
    kind: 'kubernetes',
    start,
    async alive(state) {
      const { namespace, name } = locate(state);
      const pod = await readPod(namespace, name);
      return pod ? isReady(pod) : false;
    },
    async stop(state) {
      const { namespace, name } = locate(state);
      await kubeCall(`delete the pod ${namespace}/${name}`, () => core.deleteNamespacedPod({ namespace, name }), [404]);
    },
    async wipe(state) {
      const { namespace, name } = locate(state);
      await deleteAll(namespace, name);
    },
    usedBytes,
  };
}
