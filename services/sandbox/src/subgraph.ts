import { readFileSync } from 'node:fs';
import { nullWhenNotFound, strataPrincipalWith, type StrataSubgraphContext } from '@sigil/kit/graphql';
import type { Resolvers } from './gen/graphql.ts';
import type { SandboxService } from './sandboxes.ts';
import type { sandboxView } from './views.ts';

export const typeDefs = readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8');

/** What the Sandbox resolvers return: the console's sandbox. */
export type SandboxNode = ReturnType<typeof sandboxView>;

/**
 * The sandbox service's subgraph over the console API's use cases, with the role viewer like its reads. Its backup and
 * target are references the catalog's subgraph resolves, with the catalog's scoping.
 */
export function createResolvers(sandboxes: SandboxService): Resolvers {
  const viewer = (context: StrataSubgraphContext) => strataPrincipalWith(context, 'viewer');
  const sandboxOrNull = (name: string) => nullWhenNotFound(() => sandboxes.get(name));
  return {
    Query: {
      strataSandboxes: (_, __, context) => {
        viewer(context);
        return sandboxes.list();
      },
      strataSandbox: (_, args, context) => {
        viewer(context);
        return sandboxOrNull(args.name);
      },
    },
    Sandbox: {
      backup: (sandbox) => (sandbox.backupID ? { id: sandbox.backupID } : null),
      target: (sandbox) => targetReference(sandbox.target),
      __resolveReference: (reference, context) => {
        viewer(context);
        return sandboxOrNull(reference.name);
      },
    },
  };
}

/** `namespace/name` as the catalog's Target key. */
function targetReference(target: string): { namespace: string; name: string } | null {
  const [namespace, name] = target.split('/');
  return namespace && name ? { namespace, name } : null;
}
