import { dashboardUrl } from './urls.ts';

/** Longest `next` kept; a longer one is ignored like any other unacceptable value. */
const MAX_LENGTH = 2048;

/**
 * The dashboard path a sign-in with SSO lands on (`next` of `GET /v1/auth/sso/start`), or undefined for the default
 * `/app/`. Only a path of the dashboard on our own origin is kept: `/app` or `/app/...`, without `//`, a backslash
 * (browsers read `/\` as `//`), a dot segment, an encoded slash, backslash or dot (which a server or browser could
 * decode into one of those), whitespace or control characters. Anything else is ignored, never an error: the person
 * still signs in, only on the dashboard's home page.
 */
export function dashboardReturnPath(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_LENGTH) return undefined;
  if (raw !== '/app' && !raw.startsWith('/app/') && !raw.startsWith('/app?') && !raw.startsWith('/app#')) return undefined;
  if (raw.includes('//') || raw.includes('\\')) return undefined;
  if (/[\s\p{Cc}]/u.test(raw)) return undefined;
  if (/%(2f|5c|2e|00)/i.test(raw)) return undefined;
  const path = raw.split(/[?#]/, 1)[0]!;
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) return undefined;
  return raw;
}

/** Where a successful sign-in goes: the stored dashboard path under the public origin, else the dashboard's home. */
export function landingUrl(publicUrl: string, returnTo: string | null | undefined): string {
  const path = dashboardReturnPath(returnTo);
  return path ? `${publicUrl}${path}` : dashboardUrl(publicUrl);
}
