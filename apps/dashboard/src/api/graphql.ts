import { cacheExchange } from '@urql/exchange-graphcache';
import { Client, fetchExchange } from 'urql';
import { modeHeaders, type Mode } from './mode.ts';

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
          // Objects without an id of their own are embedded in their parent's record.
          EnvelopeConnection: () => null,
          TemplateConnection: () => null,
          WebhookEndpointConnection: () => null,
          AnchorConnection: () => null,
          AuditTrail: () => null,
          TemplateVersion: () => null,
          TemplateField: () => null,
          TemplateRole: () => null,
          TemplateVariable: () => null,
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
