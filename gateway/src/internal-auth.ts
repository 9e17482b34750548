/**
 * The wire contract of the accounts service's `POST /internal/v1/authenticate`. Types only: the
 * gateway depends on the shape the accounts service publishes, never on its implementation
 * (`import type` is erased, nothing of accounts is loaded at run time).
 */
export type {
  AuthenticateFailureReason,
  AuthenticateRequest,
  AuthenticateResponse,
} from '@sigil/accounts/internal-auth';

/** Same value as accounts' `INTERNAL_AUTHENTICATE_PATH` (a value import would load the accounts package). */
export const AUTHENTICATE_PATH = '/internal/v1/authenticate';
