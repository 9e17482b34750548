import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';

/**
 * Whether a request reached the platform over TLS: the gateway's own socket, or, behind proxies the deployment trusts
 * (`TRUSTED_PROXIES` ≥ 1), what the outermost of them wrote in `X-Forwarded-Proto`. With no trusted proxy a caller's
 * `X-Forwarded-Proto` is ignored: anyone can write it.
 */
export function isSecureRequest(req: Pick<IncomingMessage, 'headers' | 'socket'>, trustedProxies: number): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  if (trustedProxies <= 0) return false;
  const header = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(header) ? header[0] : header)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https';
}

/** Two years, the preload list's minimum being one; no `includeSubDomains`: the gateway does not own its siblings. */
export const HSTS = 'max-age=63072000';

/** `Strict-Transport-Security` on every answer to a request that came over TLS (browsers ignore it over plain http). */
export function transportSecurity(trustedProxies: number): RequestHandler {
  return (req, res, next) => {
    if (isSecureRequest(req, trustedProxies)) res.setHeader('strict-transport-security', HSTS);
    next();
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Why a browser request must not ride on the cookies it carries (CSRF), or undefined when it may. A browser says where
 * a request comes from: `Sec-Fetch-Site` (every current browser), else `Origin` (older ones, on every cross-origin
 * write). Only `same-origin` (and `none`, a person's own navigation) passes; `same-site` does not (a sibling
 * subdomain is another party). A request with neither header is not a browser's: it carries no ambient credential.
 * Safe methods pass unless `always` (a WebSocket handshake is a GET that opens a two-way channel).
 */
export function crossOriginRefusal(req: Pick<IncomingMessage, 'headers' | 'method'>, options: { always?: boolean } = {}): string | undefined {
  if (!options.always && SAFE_METHODS.has((req.method ?? 'GET').toUpperCase())) return undefined;
  const site = single(req.headers['sec-fetch-site'])?.toLowerCase();
  if (site !== undefined) return site === 'same-origin' || site === 'none' ? undefined : `Sec-Fetch-Site is ${site}`;
  const origin = single(req.headers.origin);
  if (origin === undefined) return undefined;
  const host = single(req.headers.host)?.toLowerCase();
  let originHost: string;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    return `Origin ${origin.slice(0, 100)} is not an origin`;
  }
  return host !== undefined && originHost === host ? undefined : `Origin ${origin.slice(0, 100)} is another site`;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
