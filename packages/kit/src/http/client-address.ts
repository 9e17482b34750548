import type { IncomingMessage } from 'node:http';

/**
 * The caller's address, by one rule for every process: the hops are the `X-Forwarded-For` entries followed by the
 * socket peer; the last `trustedProxies` hops were added by proxies we trust, so the client is the hop just before
 * them. Entries further left were written by the caller and can be anything. Services sit behind the gateway (one
 * trusted hop); the gateway trusts as many as its deployment puts in front of it (default none).
 */
export function clientAddress(req: Pick<IncomingMessage, 'headers' | 'socket'>, trustedProxies = 1): string {
  const hops = [...forwardedFor(req.headers['x-forwarded-for']), req.socket.remoteAddress ?? ''];
  const index = Math.max(0, hops.length - 1 - Math.max(0, Math.floor(trustedProxies)));
  return normalizeAddress(hops[index] ?? '');
}

function forwardedFor(header: string | string[] | undefined): string[] {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return values.flatMap((value) => value.split(',')).map((entry) => entry.trim()).filter((entry) => entry !== '');
}

/** `::ffff:10.0.0.1` → `10.0.0.1`; `[::1]:443` or `1.2.3.4:80` (ports some proxies append) → the address alone. */
export function normalizeAddress(address: string): string {
  let value = address.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) value = bracketed[1] as string;
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
  return value.replace(/^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i, '$1');
}
