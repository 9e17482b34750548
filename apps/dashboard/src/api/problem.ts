import type { components } from '@sigil/proto/api/sigil';

export type Problem = components['schemas']['Problem'];

/** An API refusal (RFC 9457 problem) or a network failure, as the pages show it. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.detail || problem.title);
    this.problem = problem;
  }

  /** The `detail` of the error whose pointer names `pointer` (`/body/email`), or of one inside it (`/body/recipients/0`). */
  fieldError(pointer: string): string | undefined {
    const errors = this.problem.errors ?? [];
    return (errors.find((e) => e.pointer === pointer) ?? errors.find((e) => e.pointer.startsWith(pointer + '/')))?.detail;
  }

  /** Whether some error names a field: the page shows the problem's own detail only when none does. */
  get hasFieldErrors(): boolean {
    return (this.problem.errors?.length ?? 0) > 0;
  }
}

export function isProblem(body: unknown): body is Problem {
  return typeof body === 'object' && body !== null && typeof (body as Problem).status === 'number' && typeof (body as Problem).title === 'string';
}

/** A problem for what the API never answered (offline, gateway down, a body that is not a problem). */
export function localProblem(status: number, detail: string): Problem {
  return { type: 'about:blank', title: status === 0 ? 'Network error' : 'Unexpected answer', status: status || 503, detail, requestId: '' };
}
