import type { Request } from 'express';
import { randomToken, sha256Hex } from '../tokens.ts';
import { LOGIN_STATE_SECONDS } from './login-state.ts';

/**
 * Binds a login to the browser that started it, against login CSRF (someone else's IdP response, with its
 * RelayState or state, slipped into the victim's browser would sign the victim in as that someone). The cookie is
 * SameSite=None because the IdP's SAML response is a cross-site POST; it holds a random value, reused while it lives
 * so logins in several tabs share it, and the login state keeps its SHA-256.
 */
export const BINDING_COOKIE = 'sigil_sso';
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function presentedBinding(req: Request): string | undefined {
  const header = req.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (part.slice(0, at).trim() === BINDING_COOKIE) {
      const value = part.slice(at + 1).trim();
      if (TOKEN.test(value)) return value;
    }
  }
  return undefined;
}

export interface Binding {
  hash: string;
  setCookie: string;
}

/** The binding a login started now carries: the browser's (renewed) or a new one. */
export function bindingFor(req: Request): Binding {
  const value = presentedBinding(req) ?? randomToken();
  return { hash: sha256Hex(value), setCookie: `${BINDING_COOKIE}=${value}; HttpOnly; Secure; SameSite=None; Path=/; Max-Age=${LOGIN_STATE_SECONDS}` };
}

export const sameBrowser = (req: Request, browserHash: string) => {
  const value = presentedBinding(req);
  return value !== undefined && sha256Hex(value) === browserHash;
};
