import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, VERSION, type KindInfo } from './kinds.ts';
import type { CustomResource } from './documents.ts';

/** The HTTP status of a failed API call (ApiException's `code`), 0 when there was none. */
export function statusOf(error: unknown): number {
  const code = (error as { code?: unknown; statusCode?: unknown } | null)?.code ?? (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : 0;
}

/** How many times a write that lost a resourceVersion race (409) is read again and retried. */
const CONFLICT_RETRIES = 5;

export interface CustomObjects {
  get(info: KindInfo, namespace: string, name: string): Promise<CustomResource | undefined>;
  list(info: KindInfo, namespace: string): Promise<{ items: CustomResource[]; metadata?: { resourceVersion?: string } }>;
  /**
   * Read-modify-write with optimistic concurrency: `change` gets the newest object and answers the one to write
   * (undefined: nothing to write). A 409 Conflict reads it again and retries. Undefined when the object is gone.
   * `beforeWrite` runs before every attempt (the controller checks it still holds the Lease; throwing stops).
   */
  update(info: KindInfo, object: CustomResource, change: (current: CustomResource) => CustomResource | undefined, target: 'object' | 'status', beforeWrite?: () => void): Promise<CustomResource | undefined>;
}

export function createCustomObjects(kubeConfig: KubeConfig): CustomObjects {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const at = (info: KindInfo, namespace: string, name: string) => ({ group: GROUP, version: VERSION, plural: info.plural, namespace, name });

  async function get(info: KindInfo, namespace: string, name: string): Promise<CustomResource | undefined> {
    try {
      return (await api.getNamespacedCustomObject(at(info, namespace, name))) as CustomResource;
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  return {
    get,
    async list(info, namespace) {
      const list = namespace
        ? await api.listNamespacedCustomObject({ group: GROUP, version: VERSION, plural: info.plural, namespace })
        : await api.listClusterCustomObject({ group: GROUP, version: VERSION, plural: info.plural });
      return list as { items: CustomResource[]; metadata?: { resourceVersion?: string } };
    },
    async update(info, object, change, target, beforeWrite) {
      let current: CustomResource | undefined = object;
      for (let attempt = 0; ; attempt++) {
        if (!current) return undefined;
        const next = change(current);
        if (!next) return current;
        beforeWrite?.();
        const { namespace, name } = current.metadata;
        try {
          const body = { ...next, metadata: { ...next.metadata, resourceVersion: current.metadata.resourceVersion } };
          const written =
            target === 'status'
              ? await api.replaceNamespacedCustomObjectStatus({ ...at(info, namespace, name), body })
              : await api.replaceNamespacedCustomObject({ ...at(info, namespace, name), body });
          return written as CustomResource;
        } catch (error) {
          const status = statusOf(error);
          if (status === 404) return undefined;
          if (status !== 409 || attempt >= CONFLICT_RETRIES) throw error;
          current = await get(info, namespace, name);
        }
      }
    },
  };
}
