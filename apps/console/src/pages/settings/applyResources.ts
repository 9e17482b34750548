import type { components } from '@sigil/proto/api/strata';
import { unwrap, type RestClient } from '../../api/rest.ts';
import type { ResourceProblem } from './yamlLines.ts';

export type ApplyResult = components['schemas']['ApplyResult'];

/** What an apply came to: applied (with its warnings), or refused with every problem of every document. */
export type ApplyOutcome = { applied: ApplyResult } | { refused: string; problems: ResourceProblem[] };

/**
 * `POST /api/v1/resources` with the YAML as it is written (`application/yaml`: the API parses it and numbers its
 * documents). A refusal that lists its problems (400 `{ error, errors }`) is an outcome the editor shows line by line;
 * any other failure (403, 409, a YAML syntax error, the network) is thrown as an ApiError.
 */
export async function applyResources(rest: RestClient, yaml: string): Promise<ApplyOutcome> {
  const call = rest.POST('/resources', {
    body: yaml,
    bodySerializer: (body) => body,
    headers: { 'content-type': 'application/yaml' },
  });
  const answer = await call.catch(() => undefined);
  if (!answer) return { applied: await unwrap(call) };
  const refusal = answer.error as { error?: unknown; errors?: unknown } | undefined;
  if (!answer.response.ok && refusal && Array.isArray(refusal.errors) && refusal.errors.length > 0) {
    return { refused: typeof refusal.error === 'string' ? refusal.error : '', problems: refusal.errors as ResourceProblem[] };
  }
  return { applied: await unwrap(Promise.resolve(answer)) };
}
