/** One refused field: where in the request (`/body/email`, `/query/at`) and what is wrong with it. */
export interface FieldProblem {
  pointer: string;
  detail: string;
}

/** What the pages need of any API's refusal: Sigil's RFC 9457 problems have it; Strata's `{ error }` is mapped to it. */
export interface ProblemLike {
  title: string;
  status: number;
  detail?: string;
  errors?: FieldProblem[];
}

/** An API refusal or a network failure, as the pages show it: beside the field its pointer names, or on its own. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly problem: ProblemLike;
  constructor(problem: ProblemLike) {
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

/** The title people read for a status the API gave without one. */
export function statusTitle(status: number): string {
  const titles: Record<number, string> = {
    0: 'Network error',
    400: 'Bad request',
    401: 'Not signed in',
    403: 'Not allowed',
    404: 'Not found',
    409: 'Conflict',
    422: 'Cannot be done',
    429: 'Too many requests',
    501: 'Not implemented',
    503: 'Service unavailable',
  };
  return titles[status] ?? (status >= 500 ? 'Server error' : 'Unexpected answer');
}
