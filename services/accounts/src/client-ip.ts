import type { Request } from 'express';

/**
 * The caller's address as the gateway saw it. Services are reachable only through the gateway, which appends
 * the peer address to `x-forwarded-for`; the right-most entry is therefore the one a client cannot forge.
 */
export function clientIp(req: Request): string {
  const forwarded = req.headers['x-forwarded-for'];
  const header = Array.isArray(forwarded) ? forwarded.join(',') : forwarded;
  const last = header
    ?.split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .at(-1);
  return last ?? req.socket.remoteAddress ?? 'unknown';
}
