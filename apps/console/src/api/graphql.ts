import { cacheExchange, type Data } from '@urql/exchange-graphcache';
import { Client, fetchExchange } from 'urql';

/**
 * Object types the console reads that have no key of their own (values, lists, parts of another record): embedded in
 * their parent's record. test/graphcache-keys.test.ts keeps the list in step with the schema.
 */
export const EMBEDDED_TYPES = ['RestoreProgress'];

const namespaced = (data: Data) => (typeof data.namespace === 'string' && typeof data.name === 'string' ? `${data.namespace}/${data.name}` : null);

/**
 * Reads go through the gateway's federated GraphQL (the Strata subgraphs) with a normalised cache: a target seen in
 * the list and on its page is one record, so a live refetch anywhere shows everywhere.
 */
export function createGraphqlClient(): Client {
  return new Client({
    url: '/graphql',
    preferGetMethod: false,
    exchanges: [
      cacheExchange({
        keys: {
          ...Object.fromEntries(EMBEDDED_TYPES.map((type) => [type, () => null])),
          Target: namespaced,
          Restore: namespaced,
          Sandbox: (s) => (typeof s.name === 'string' ? s.name : null),
        },
      }),
      fetchExchange,
    ],
    fetchOptions: () => ({ credentials: 'same-origin' }),
    requestPolicy: 'cache-and-network',
  });
}
