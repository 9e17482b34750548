import type { CombinedError } from 'urql';
import { ApiError, statusTitle } from '@sigil/web-ui';

/** The statuses the subgraphs' error codes stand for (packages/kit strata-subgraph). */
const STATUS_OF_CODE: Record<string, number> = { UNAUTHENTICATED: 401, FORBIDDEN: 403, NOT_FOUND: 404, BAD_USER_INPUT: 400, UNPROCESSABLE: 422 };

/**
 * A failed GraphQL read as the pages show a refusal: a role too low is "Not allowed" with the API's words (as a REST
 * 403 is), not a "[GraphQL] …" message; an unreachable gateway is a network error.
 */
export function refusalOf(error: CombinedError | undefined): ApiError | undefined {
  if (!error) return undefined;
  if (error.networkError && !error.graphQLErrors.length) {
    return new ApiError({ title: statusTitle(0), status: 0, detail: `The console API could not be reached (${error.networkError.message}).` });
  }
  const first = error.graphQLErrors[0];
  const code = typeof first?.extensions?.code === 'string' ? first.extensions.code : '';
  const status = STATUS_OF_CODE[code] ?? (typeof first?.extensions?.status === 'number' ? first.extensions.status : 500);
  return new ApiError({ title: statusTitle(status), status, detail: first?.message ?? error.message });
}
