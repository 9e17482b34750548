/** The discovery documents (`/api`, `/apis`, `/api/v1`, `/apis/<group>/<version>`, `/version`) for the served types. */
import type { ResourceType } from './resources.ts';
import { basePathOf } from './resources.ts';
import { pathNotFound } from './status.ts';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function groupVersions(types: ResourceType[]): Array<{ group: string; version: string }> {
  const seen = new Map<string, { group: string; version: string }>();
  for (const t of types) seen.set(`${t.group}/${t.version}`, { group: t.group, version: t.version });
  return [...seen.values()];
}

function resourceList(types: ResourceType[], group: string, version: string) {
  const served = types.filter((t) => t.group === group && t.version === version);
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources: served.flatMap((t) => [
      { name: t.plural, singularName: t.kind.toLowerCase(), namespaced: t.namespaced, kind: t.kind, verbs: VERBS },
      ...(t.statusSubresource ? [{ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] }] : []),
    ]),
  };
}

function apiGroup(types: ResourceType[], group: string) {
  const versions = groupVersions(types).filter((gv) => gv.group === group).map((gv) => ({ groupVersion: `${group}/${gv.version}`, version: gv.version }));
  return { name: group, versions, preferredVersion: versions[0] };
}

export function discovery(types: ResourceType[], path: string): unknown {
  const segments = path.split('/').filter(Boolean);
  if (path === '/version') return { major: '1', minor: '33', gitVersion: 'v1.33.0-kube-fake', platform: 'linux/amd64' };
  if (segments.length === 1 && segments[0] === 'api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
  if (segments.length === 1 && segments[0] === 'apis') {
    const groups = [...new Set(types.filter((t) => t.group).map((t) => t.group))];
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => apiGroup(types, g)) };
  }
  if (segments[0] === 'api' && segments.length === 2 && types.some((t) => !t.group && t.version === segments[1])) return resourceList(types, '', segments[1]!);
  if (segments[0] === 'apis' && segments.length === 2 && types.some((t) => t.group === segments[1])) return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(types, segments[1]!) };
  if (segments[0] === 'apis' && segments.length === 3 && types.some((t) => basePathOf(t) === path)) return resourceList(types, segments[1]!, segments[2]!);
  throw pathNotFound();
}
