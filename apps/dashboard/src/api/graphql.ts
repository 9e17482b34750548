import { cacheExchange, type Data } from '@urql/exchange-graphcache';
import { Client, fetchExchange } from 'urql';
import { modeHeaders, type Mode } from './mode.ts';

/**
 * Object types of gateway/api-schema.graphql without an `id` (values, lists, parts of another record), and TemplateField,
 * whose id is unique within its version only. test/graphcache-keys.test.ts keeps the list in step with the schema.
 */
export const EMBEDDED_TYPES = [
  'ActivityEntry', 'Anchor', 'AnchorConnection', 'ApiKeyConnection', 'AuditEntry', 'AuditTrail', 'ChainCheck', 'EnvelopeConnection',
  'EnvelopeStatusCount', 'InvitationConnection', 'LogLeaf', 'RestoreProgress', 'SandboxExtension', 'Sealing', 'TemplateBody',
  'TemplateConnection', 'TemplatePageSize', 'TemplateRole', 'TemplateVariable', 'TemplateVersion', 'TemplateField',
  'WebhookDeliveryConnection', 'WebhookEndpointConnection', 'WebhookHealth',
];

const namespaced = (data: Data) => (typeof data.namespace === 'string' && typeof data.name === 'string' ? `${data.namespace}/${data.name}` : null);

/**
 * Reads go through the gateway's federated GraphQL with a normalised cache (graphcache): an envelope seen in the list
 * and on its page is one record, so a live change refetched anywhere shows everywhere. One client per mode: test and
 * live data never share a cache.
 */
export function createGraphqlClient(mode: Mode): Client {
  return new Client({
    url: '/graphql',
    preferGetMethod: false,
    exchanges: [
      cacheExchange({
        keys: {
          // Types without an id of their own are embedded in their parent's record (their list, their envelope).
          ...Object.fromEntries(EMBEDDED_TYPES.map((type) => [type, () => null])),
          // Strata's records are named by namespace and name; when a query leaves those out, embedded too.
          Target: namespaced,
          Restore: namespaced,
          Sandbox: namespaced,
          Recipient: (r) => (typeof r.id === 'string' ? r.id : null),
          Member: (m) => (typeof m.id === 'string' ? m.id : null),
        },
      }),
      fetchExchange,
    ],
    fetchOptions: () => ({ credentials: 'same-origin', headers: modeHeaders(mode) }),
    requestPolicy: 'cache-and-network',
  });
}
