/**
 * The resource types the fake serves and how request paths name them: the core objects the sandbox runtime uses,
 * Leases, and the custom resources of the CustomResourceDefinitions it is given (each served version, one storage).
 */
import type { Schema } from './schema.ts';

export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  plural: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  /** Writes to the object ignore `status`; only `/status` writes it. */
  statusSubresource: boolean;
  /** `metadata.generation` counts changes outside metadata (and outside status when it is a subresource). */
  generation: boolean;
  /** Custom resources refuse an update without `metadata.resourceVersion` (AllowUnconditionalUpdate is false). */
  requireResourceVersionOnUpdate: boolean;
  /** Custom resources keep apiVersion/kind on list items; built-in lists omit them. */
  custom: boolean;
  /** A deletion that removes the object answers the object; otherwise a Status of Success (ReturnDeletedObject). */
  returnsDeletedObject: boolean;
  /** A custom resource's structural schema: bodies are pruned to it and validated against it. */
  schema?: Schema;
}

function builtin(group: string, plural: string, kind: string, traits: { status: boolean; returnsDeleted: boolean; namespaced?: boolean; generation?: boolean }): ResourceType {
  return {
    group, version: 'v1', plural, kind, listKind: `${kind}List`, namespaced: traits.namespaced ?? true, statusSubresource: traits.status,
    generation: traits.generation ?? false, requireResourceVersionOnUpdate: false, custom: false, returnsDeletedObject: traits.returnsDeleted,
  };
}

/** Traits as the registries of kube-apiserver set them (status strategies, ReturnDeletedObject). */
export const BUILTIN_TYPES: ResourceType[] = [
  builtin('', 'namespaces', 'Namespace', { status: true, returnsDeleted: true, namespaced: false }),
  builtin('', 'pods', 'Pod', { status: true, returnsDeleted: true }),
  builtin('', 'services', 'Service', { status: true, returnsDeleted: true }),
  builtin('', 'secrets', 'Secret', { status: false, returnsDeleted: false }),
  builtin('', 'configmaps', 'ConfigMap', { status: false, returnsDeleted: false }),
  builtin('', 'persistentvolumeclaims', 'PersistentVolumeClaim', { status: true, returnsDeleted: true }),
  builtin('', 'events', 'Event', { status: false, returnsDeleted: false }),
  builtin('coordination.k8s.io', 'leases', 'Lease', { status: false, returnsDeleted: false }),
  builtin('apps', 'deployments', 'Deployment', { status: true, returnsDeleted: false, generation: true }),
];

interface CrdLike {
  spec?: {
    group?: string;
    scope?: string;
    names?: { plural?: string; kind?: string; listKind?: string };
    versions?: Array<{ name?: string; served?: boolean; subresources?: { status?: unknown }; schema?: { openAPIV3Schema?: Schema } }>;
  };
}

export function typesOfCrd(crd: object): ResourceType[] {
  const spec = (crd as CrdLike).spec;
  const group = spec?.group;
  const plural = spec?.names?.plural;
  const kind = spec?.names?.kind;
  if (!group || !plural || !kind) throw new Error('a CustomResourceDefinition needs spec.group, spec.names.plural and spec.names.kind');
  return (spec.versions ?? [])
    .filter((v) => v.name && v.served !== false)
    .map((v) => ({
      group,
      version: v.name!,
      plural,
      kind,
      listKind: spec.names?.listKind ?? `${kind}List`,
      namespaced: spec.scope !== 'Cluster',
      statusSubresource: v.subresources?.status !== undefined,
      generation: true,
      requireResourceVersionOnUpdate: true,
      custom: true,
      returnsDeletedObject: true,
      ...(v.schema?.openAPIV3Schema ? { schema: v.schema.openAPIV3Schema } : {}),
    }));
}

export const apiVersionOf = (type: ResourceType) => (type.group ? `${type.group}/${type.version}` : type.version);
export const basePathOf = (type: Pick<ResourceType, 'group' | 'version'>) => (type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`);
/** Versions of one resource share their objects. */
export const storageOf = (type: ResourceType) => `${type.group}/${type.plural}`;

export function collectionPath(type: ResourceType, namespace?: string): string {
  return namespace && type.namespaced ? `${basePathOf(type)}/namespaces/${namespace}/${type.plural}` : `${basePathOf(type)}/${type.plural}`;
}

export const objectPath = (type: ResourceType, namespace: string | undefined, name: string) => `${collectionPath(type, namespace)}/${name}`;

export type Route =
  | { kind: 'resource'; type: ResourceType; namespace?: string; name?: string; subresource?: string; legacyWatch: boolean }
  | { kind: 'nodeProxy'; node: string; path: string }
  | { kind: 'discovery'; path: string };

/** Parses `/api/v1/...` and `/apis/<group>/<version>/...`; undefined for anything the fake does not serve. */
export function route(types: ResourceType[], pathname: string): Route | undefined {
  const segments = pathname.split('/').filter(Boolean).map((s) => decodeURIComponent(s));
  let rest: string[];
  let group: string;
  let version: string;
  if (segments[0] === 'api') {
    if (segments.length <= 2) return { kind: 'discovery', path: pathname };
    [group, version, rest] = ['', segments[1]!, segments.slice(2)];
  } else if (segments[0] === 'apis') {
    if (segments.length <= 3) return { kind: 'discovery', path: pathname };
    [group, version, rest] = [segments[1]!, segments[2]!, segments.slice(3)];
  } else return undefined;
  if (!group && rest[0] === 'nodes' && rest[2] === 'proxy' && rest[1]) return { kind: 'nodeProxy', node: rest[1], path: rest.slice(3).join('/') };
  const legacyWatch = rest[0] === 'watch';
  if (legacyWatch) rest = rest.slice(1);
  const find = (plural: string | undefined, namespaced: boolean) => types.find((t) => t.group === group && t.version === version && t.plural === plural && t.namespaced === namespaced);
  let namespace: string | undefined;
  let type = rest[0] === 'namespaces' && rest.length >= 3 ? find(rest[2], true) : undefined;
  if (type) {
    namespace = rest[1];
    rest = rest.slice(2);
  } else type = find(rest[0], false) ?? find(rest[0], true);
  if (!type || rest.length > 3) return undefined;
  return { kind: 'resource', type, ...(namespace !== undefined ? { namespace } : {}), ...(rest[1] ? { name: rest[1] } : {}), ...(rest[2] ? { subresource: rest[2] } : {}), legacyWatch };
}
