import type { IncomingHttpHeaders } from 'node:http';
import { SIGIL } from '@sigil/proto/product';

export const SESSION_COOKIE = SIGIL.sessionCookie;
export const API_KEY_HEADER = 'x-api-key';
/** Dashboard sessions pick the mode they act in with this header (`test` or `live`, default live): `sigil-mode`. */
export const MODE_HEADER = `${SIGIL.name.toLowerCase()}-mode`;

/**
 * The API key a request presents, if any. `Authorization` wins over `x-api-key` (it is the preferred
 * form). `present` without `key` means a credential was sent but cannot be an API key at all
 * (another scheme, an empty value): that is a malformed key, not a missing one.
 */
export function apiKeyOf(headers: IncomingHttpHeaders): { present: false } | { present: true; key: string | undefined } {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    return { present: true, key: bearer?.[1] };
  }
  const header = headers[API_KEY_HEADER];
  if (header !== undefined) {
    const value = (Array.isArray(header) ? header.join(',') : header).trim();
    return { present: true, key: value === '' ? undefined : value };
  }
  return { present: false };
}

interface CookiePair {
  name: string;
  raw: string;
}

function cookiePairs(header: string | undefined): CookiePair[] {
  if (!header) return [];
  return header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((raw) => {
      const eq = raw.indexOf('=');
      return { name: (eq === -1 ? raw : raw.slice(0, eq)).trim(), raw };
    });
}

/** The value of the first cookie of that name, unquoted; undefined when absent or empty. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  const pair = cookiePairs(header).find((cookie) => cookie.name === name);
  const eq = pair?.raw.indexOf('=') ?? -1;
  if (!pair || eq === -1) return undefined;
  let value = pair.raw.slice(eq + 1).trim();
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  return value === '' ? undefined : value;
}

/** The `Cookie` header without the cookies of that name, or undefined when nothing else is left. */
export function cookieWithout(header: string | undefined, name: string): string | undefined {
  const rest = cookiePairs(header).filter((cookie) => cookie.name !== name);
  return rest.length ? rest.map((cookie) => cookie.raw).join('; ') : undefined;
}

/** The value of the dashboard session cookie (the first one when a browser sends several). */
export function sessionTokenOf(headers: IncomingHttpHeaders): string | undefined {
  return cookieValue(headers.cookie, SESSION_COOKIE);
}

/** The `Cookie` header without the session cookie, or undefined when nothing else is left. */
export function cookieWithoutSession(header: string | undefined): string | undefined {
  return cookieWithout(header, SESSION_COOKIE);
}
