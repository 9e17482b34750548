import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { GraphQLError, Kind, visit, type DocumentNode } from 'graphql';
import { findUnstorable, unstorableReason } from '../db/storable-text.ts';

/** The first string of the operation's variables (a path such as `$input.names[1]`) PostgreSQL could not store. */
function inVariables(variables: Record<string, unknown>): { where: string; reason: string } | undefined {
  const found = findUnstorable(variables);
  if (!found) return undefined;
  const [name, ...rest] = found.path;
  const where = rest.map((token) => (typeof token === 'number' ? `[${token}]` : `.${token.toWellFormed()}`)).join('');
  return { where: `$${String(name).toWellFormed()}${where}`, reason: found.reason };
}

/** The first string literal of the document PostgreSQL could not store. */
function inLiterals(document: DocumentNode): { where: string; reason: string } | undefined {
  let found: { where: string; reason: string } | undefined;
  visit(document, {
    [Kind.STRING]: (node) => {
      const reason = found ? undefined : unstorableReason(node.value);
      if (reason) found = { where: `the string at line ${node.loc?.startToken.line ?? '?'}`, reason };
    },
  });
  return found;
}

/**
 * Refuses an operation whose arguments hold text PostgreSQL cannot store (NUL, an unpaired surrogate), as the REST
 * contracts do: without it such a value fails its write with an internal error. BAD_USER_INPUT, HTTP 400.
 */
export function unstorableTextPlugin<TContext extends BaseContext>(): ApolloServerPlugin<TContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document }) {
          const found = inVariables(request.variables ?? {}) ?? inLiterals(document);
          if (found) throw new GraphQLError(`${found.where} ${found.reason}.`, { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });
        },
      };
    },
  };
}
