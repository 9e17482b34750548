import { cacheExchange } from '@urql/exchange-graphcache';
import { Client, fetchExchange } from 'urql';
import { apiCacheKeys } from '@sigil/web-ui';

/**
 * Reads go through the gateway's federated GraphQL (the Strata subgraphs) with a normalised cache (the API schema's keys,
 * shared with the dashboard): a target seen in the list and on its page is one record, so a live refetch anywhere
 * shows everywhere.
 */
export function createGraphqlClient(): Client {
  return new Client({
    url: '/graphql',
    preferGetMethod: false,
    exchanges: [cacheExchange({ keys: apiCacheKeys() }), fetchExchange],
    fetchOptions: () => ({ credentials: 'same-origin' }),
    requestPolicy: 'cache-and-network',
  });
}
