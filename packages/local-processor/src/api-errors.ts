/**
 * Errors as the processor's API answers them: `{ error: { type, code, message, param } }` with a 4xx status, which the
 * SDK turns into its own error classes (`StripeInvalidRequestError`, `StripeAuthenticationError`, ...).
 */

export type ApiErrorType = 'invalid_request_error' | 'card_error' | 'api_error';

export class ApiError extends Error {
  readonly status: number;
  readonly type: ApiErrorType;
  readonly code: string | undefined;
  readonly param: string | undefined;

  constructor(status: number, type: ApiErrorType, message: string, options: { code?: string; param?: string } = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = type;
    this.code = options.code;
    this.param = options.param;
  }

  body(): { error: Record<string, string> } {
    return { error: { type: this.type, message: this.message, ...(this.code ? { code: this.code } : {}), ...(this.param ? { param: this.param } : {}) } };
  }
}

/** A referenced object that does not exist: 404 for the path's own object, 400 for one named by a parameter. */
export function noSuch(noun: string, id: string, param?: string): ApiError {
  return new ApiError(param ? 400 : 404, 'invalid_request_error', `No such ${noun}: '${id}'`, { code: 'resource_missing', param: param ?? 'id' });
}

export function missingParam(param: string): ApiError {
  return new ApiError(400, 'invalid_request_error', `Missing required param: ${param}.`, { code: 'parameter_missing', param });
}

export function invalidParam(param: string, message: string): ApiError {
  return new ApiError(400, 'invalid_request_error', message, { code: 'parameter_invalid', param });
}
