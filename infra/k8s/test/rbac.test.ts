/**
 * The sandbox service's Role is the least its Kubernetes runtime needs: the API calls in
 * services/sandbox/src/runtime/*.ts (read as text: `core.<verb>Namespaced<Kind>` and the node proxy) are exactly the
 * verbs and resources granted, no more, no fewer. The controller's rules come from controller-rbac.ts (its owner's).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { IPolicyRule } from 'kubernetes-models/rbac.authorization.k8s.io/v1/PolicyRule';
import { controllerRules } from '../src/controller-rbac.ts';
import { sandboxClusterRules, sandboxRules } from '../src/rbac.ts';
import { ofKind, overlayNames, rendered } from './rendered-objects.ts';

const RUNTIME_DIR = path.resolve(import.meta.dirname, '../../../services/sandbox/src/runtime');
const VERBS: Record<string, string> = { create: 'create', read: 'get', delete: 'delete', deleteCollection: 'deletecollection', list: 'list', patch: 'patch', replace: 'update' };
const RESOURCES: Record<string, string> = { Pod: 'pods', Service: 'services', Secret: 'secrets', PersistentVolumeClaim: 'persistentvolumeclaims', ConfigMap: 'configmaps' };

/** `verb resource` pairs a set of rules grants. */
const granted = (rules: IPolicyRule[]) => new Set(rules.flatMap((rule) => (rule.resources ?? []).flatMap((resource) => rule.verbs.map((verb) => `${verb} ${resource}`))));

function callsOfRuntime(): Set<string> {
  const calls = new Set<string>();
  for (const file of readdirSync(RUNTIME_DIR).filter((name) => name.endsWith('.ts'))) {
    const source = readFileSync(path.join(RUNTIME_DIR, file), 'utf8');
    for (const [, verb, kind, status] of source.matchAll(/\.(create|read|deleteCollection|delete|list|patch|replace)Namespaced([A-Za-z]+?)(Status)?\(/g)) {
      const resource = RESOURCES[kind as string];
      if (!resource || !verb) throw new Error(`${file}: a call on an unknown kind ${kind}: map it here and grant it in rbac.ts`);
      calls.add(`${VERBS[verb]} ${resource}${status ? '/status' : ''}`);
    }
    if (/connectGetNodeProxy/.test(source)) calls.add('get nodes/proxy');
  }
  return calls;
}

describe('RBAC', () => {
  it('grants the sandbox service exactly the calls its Kubernetes runtime makes', () => {
    const calls = callsOfRuntime();
    expect(calls.has('create pods')).toBe(true);
    expect([...granted([...sandboxRules, ...sandboxClusterRules])].sort()).toEqual([...calls].sort());
  });

  it.each(overlayNames)('%s: renders the controller rules unchanged, where the controller watches', (name) => {
    const render = rendered[name];
    const roles = [...ofKind(render, 'Role'), ...ofKind(render, 'ClusterRole')].filter((role) => role.rules.some((rule: IPolicyRule) => rule.apiGroups?.includes('backups.strata.dev')));
    for (const role of roles) expect(role.rules).toEqual(JSON.parse(JSON.stringify(controllerRules)));
    const namespaces = roles.map((role) => role.metadata.namespace ?? '*').sort();
    expect(namespaces).toEqual(render.overlay.controllerWatchNamespaces.length > 0 ? [...render.overlay.controllerWatchNamespaces].sort() : ['*']);
  });
});
