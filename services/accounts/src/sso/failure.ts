/**
 * Why an SSO sign-in or test login was refused: a code for machines (tests, the audit's details) and a sentence an
 * admin acts on. `protocol` failures say the connection is misconfigured or under attack and count against its
 * health; `policy` failures are about one person (not a member, another domain) and do not.
 */
export type SsoFailureCode =
  | 'unknown_state'
  | 'other_browser'
  | 'replayed'
  | 'unsigned'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_audience'
  | 'wrong_recipient'
  | 'wrong_destination'
  | 'wrong_issuer'
  | 'wrong_in_response_to'
  | 'invalid_response'
  | 'idp_error'
  | 'oidc_error'
  | 'no_email'
  | 'email_not_verified'
  | 'domain_not_allowed'
  | 'not_a_member'
  | 'deprovisioned'
  | 'provisioning_failed'
  | 'connection_unavailable';

const POLICY: ReadonlySet<SsoFailureCode> = new Set(['domain_not_allowed', 'not_a_member', 'deprovisioned', 'email_not_verified', 'unknown_state', 'other_browser', 'provisioning_failed']);

export class SsoFailure extends Error {
  readonly code: SsoFailureCode;
  constructor(code: SsoFailureCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  get countsAgainstHealth(): boolean {
    return !POLICY.has(this.code);
  }
}

/**
 * Text from an unauthenticated part of a callback (OIDC `error_description`, a SAML StatusMessage, a parser's message
 * quoting the input) becomes the connection's `lastError` and an audit reason: one line of printable text, bounded.
 */
export function quoted(text: string, max = 200): string {
  const line = text.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * node-saml's error messages mapped onto our reasons. `assertionSigned` says whether the assertion carried a
 * signature at all, so an unsigned assertion is told apart from one whose signature does not verify.
 */
export function samlFailure(error: unknown, assertionSigned: boolean): SsoFailure {
  if (error instanceof SsoFailure) return error;
  const message = quoted(error instanceof Error ? error.message : String(error), 300);
  const fail = (code: SsoFailureCode, sentence: string) => new SsoFailure(code, sentence, { cause: error });
  if (/signature/i.test(message)) {
    return assertionSigned
      ? fail('bad_signature', 'The assertion signature does not verify with the identity provider certificate (bad signature or another certificate).')
      : fail('unsigned', 'The assertion is not signed; the identity provider must sign assertions.');
  }
  if (/not yet valid/i.test(message)) return fail('not_yet_valid', 'The assertion is not valid yet (NotBefore is ahead of our clock by more than the allowed skew); check the identity provider clock.');
  if (/expired|No valid subject confirmation/i.test(message)) {
    return fail('expired', 'The assertion has expired (NotOnOrAfter passed, beyond the allowed clock skew); check the clocks or sign in again.');
  }
  if (/audience/i.test(message)) return fail('wrong_audience', `The assertion is for another audience; the identity provider must use our entity id. (${message})`);
  if (/InResponseTo/i.test(message)) return fail('wrong_in_response_to', 'The response does not answer our sign-in request (InResponseTo unknown, expired or used).');
  if (/SAML provider returned/i.test(message)) return fail('idp_error', `The identity provider refused the sign-in: ${message.replace(/^SAML provider returned /, '')}.`);
  return fail('invalid_response', `The SAML response could not be read: ${message}.`);
}
