import { cacheExchange } from '@urql/exchange-graphcache';
import { Client, fetchExchange } from 'urql';
import { apiCacheKeys } from '@sigil/web-ui';
import { modeHeaders, type Mode } from './mode.ts';

/**
 * Reads go through the gateway's federated GraphQL with a normalised cache (graphcache): an envelope seen in the list
 * and on its page is one record, so a live change refetched anywhere shows everywhere. One client per mode: test and
 * live data never share a cache.
 */
export function createGraphqlClient(mode: Mode, onUnauthorized: () => void = () => undefined): Client {
  return new Client({
    url: '/graphql',
    preferGetMethod: false,
    exchanges: [
      cacheExchange({
        keys: apiCacheKeys(),
      }),
      fetchExchange,
    ],
    fetchOptions: () => ({ credentials: 'same-origin', headers: modeHeaders(mode) }),
    // The gateway answers 401 once the session is gone: the app then shows the sign-in page.
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (response.status === 401) onUnauthorized();
      return response;
    },
    requestPolicy: 'cache-and-network',
  });
}
