import type { ServiceName } from '@sigil/proto/routes';

export interface SubgraphSource {
  /** Subgraph name in the supergraph; also the key of the service's runtime URL in `serviceUrls`. */
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
