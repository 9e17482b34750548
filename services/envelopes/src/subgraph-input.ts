import { GraphQLError } from '@sigil/kit/graphql';

/** A refused argument, as GraphQL clients expect it (`BAD_USER_INPUT`). */
export function badInput(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
}
