import type { ServiceName } from '@sigil/proto/routes';
import type { RemoteGraphQLDataSource } from '@apollo/gateway';
import { balancedFetch, primaryOf, type ServiceTarget } from './replicas.ts';

type Fetcher = NonNullable<NonNullable<ConstructorParameters<typeof RemoteGraphQLDataSource>[0]>['fetcher']>;

export interface SubgraphSource {
  /** Subgraph name in the supergraph; also the key of the service's runtime URL (or its replicas') in `serviceUrls`. */
  name: ServiceName;
  /** Path of the subgraph's SDL, relative to the repository root. */
  schemaPath: string;
}

/** Every subgraph the supergraph is composed from. Add a service here when it publishes a subgraph. */
export const SUBGRAPHS: readonly SubgraphSource[] = [
  { name: 'accounts', schemaPath: 'services/accounts/src/schema.graphql' },
  { name: 'templates', schemaPath: 'services/templates/src/schema.graphql' },
  { name: 'envelopes', schemaPath: 'services/envelopes/src/schema.graphql' },
  { name: 'evidence', schemaPath: 'services/evidence/src/schema.graphql' },
  { name: 'webhooks', schemaPath: 'services/webhooks/src/schema.graphql' },
  { name: 'billing', schemaPath: 'services/billing/src/schema.graphql' },
  { name: 'backup-catalog', schemaPath: 'services/backup-catalog/src/schema.graphql' },
  { name: 'sandbox', schemaPath: 'services/sandbox/src/schema.graphql' },
];

/**
 * The URL written into the composed SDL. Only a placeholder: at run time the gateway calls
 * `serviceUrls[name] + '/graphql'` from its configuration.
 */
export function placeholderUrl(name: string): string {
  return `http://${name}.internal/graphql`;
}

/**
 * Where the gateway calls a subgraph: `<base>/graphql` of one replica per call, round robin, the next replica when one
 * refuses the connection (a subgraph call's body is a string: sending it again elsewhere is safe).
 */
export function subgraphEndpoint(target: ServiceTarget): { url: string; fetcher: Fetcher } {
  return { url: `${primaryOf(target).replace(/\/+$/, '')}/graphql`, fetcher: balancedFetch(target) as unknown as Fetcher };
}
