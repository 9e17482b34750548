import type { components } from '@sigil/proto/api/sigil';

export { ApiError } from '@sigil/web-ui';

export type Problem = components['schemas']['Problem'];

export function isProblem(body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && typeof (body as Problem).status === 'number' && typeof (body as Problem).title === 'string';
}

/** A problem for what the API never answered (offline, gateway down, a body that is not a problem). */
export function localProblem(status: number, detail: string): Problem {
  return { type: 'about:blank', title: status === 0 ? 'Network error' : 'Unexpected answer', status: status || 503, detail, requestId: '' };
}
