import { SIGIL } from '@sigil/proto/product';

/** One row per problem type: the public slug, its HTTP status and title. */
export const ERROR_CODES = {
  'validation-failed': { status: 400, title: 'Validation failed' },
  'malformed-request': { status: 400, title: 'Malformed request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  'payment-required': { status: 402, title: 'Payment required' },
  forbidden: { status: 403, title: 'Forbidden' },
  'plan-upgrade-required': { status: 403, title: 'Plan upgrade required' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  'template-in-use': { status: 409, title: 'Template in use' },
  'no-draft': { status: 409, title: 'No draft' },
  'document-not-ready': { status: 409, title: 'Document not ready' },
  'not-recipients-turn': { status: 409, title: "Not the recipient's turn" },
  'link-paused': { status: 409, title: 'Link paused' },
  'verification-required': { status: 403, title: 'Verification required' },
  'idempotency-in-progress': { status: 409, title: 'Idempotent request in progress' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'idempotency-key-reused': { status: 422, title: 'Idempotency key reused' },
  unprocessable: { status: 422, title: 'Unprocessable' },
  'not-restorable': { status: 422, title: 'Not restorable' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  internal: { status: 500, title: 'Internal server error' },
  'not-implemented': { status: 501, title: 'Not implemented' },
  'bad-gateway': { status: 502, title: 'Bad gateway' },
  'service-unavailable': { status: 503, title: 'Service unavailable' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  /** JSON Pointer into the request, rooted at its part: /body/name, /query/limit, /path/id, /header/idempotency-key. */
  pointer: string;
  detail: string;
}

/** One reference token of a JSON Pointer (RFC 6901): `~` and `/` escaped, as a member name chosen by a caller needs. */
export function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A JSON Pointer into the request from its part and tokens: `pointerTo('body', 'variables', name)`. */
export function pointerTo(part: 'body' | 'query' | 'path' | 'header', ...tokens: Array<string | number>): string {
  return ['', part, ...tokens.map((token) => escapePointer(String(token)))].join('/');
}

export interface AppErrorOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
  extensions?: Record<string, unknown>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;

  constructor(code: ErrorCode, detail: string, options: AppErrorOptions = {}) {
    super(detail, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  requestId: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

/** RFC 9457 rendering used by Sigil. */
export function toProblem(error: AppError, requestId: string): Problem {
  const { title, status } = ERROR_CODES[error.code];
  return {
    ...error.extensions,
    type: `${SIGIL.problemsBaseUrl}/${error.code}`,
    title,
    status,
    detail: error.message,
    requestId,
    ...(error.errors ? { errors: error.errors } : {}),
  };
}

export const notFound = (what: string): AppError => new AppError('not-found', `${what} was not found.`);
/** An operation of the contract its owner has no handler for yet (a service that is down is 503, not this). */
export const notImplemented = (service: string, operationId: string): AppError =>
  new AppError('not-implemented', `The ${service} service does not implement ${operationId} yet.`);
export const missingPermission = (permission: string): AppError =>
  new AppError('forbidden', `Missing permission: ${permission}.`);
