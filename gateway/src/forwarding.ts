import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { REQUEST_ID_HEADER, clientAddress } from '@sigil/kit/http';
import { PRINCIPAL_HEADER } from '@sigil/kit/auth';
import { STRATA } from '@sigil/proto/strata';
import { API_KEY_HEADER, cookieWithoutSession } from './credentials.ts';
import { endToEndHeaders } from './proxy.ts';

/**
 * `x-request-id` and `x-forwarded-*` for a service. The client address follows the one rule of the platform
 * (`clientAddress`): with no trusted proxy in front, what the caller wrote in X-Forwarded-For is dropped; behind trusted
 * proxies their hops are kept up to the client. Either way the client is the last entry, the hop services believe.
 */
export function forwardingFacts(req: IncomingMessage, trustedProxies: number): OutgoingHttpHeaders {
  const client = clientAddress(req, trustedProxies);
  const host = req.headers.host ?? '';
  const proto = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const headers: OutgoingHttpHeaders = { [REQUEST_ID_HEADER]: String(req.headers[REQUEST_ID_HEADER]) };
  if (trustedProxies > 0) {
    headers['x-forwarded-for'] = trustedChain(req, trustedProxies, client);
    headers['x-forwarded-proto'] = firstValue(req.headers['x-forwarded-proto']) ?? proto;
    headers['x-forwarded-host'] = firstValue(req.headers['x-forwarded-host']) ?? host;
  } else {
    headers['x-forwarded-for'] = client;
    headers['x-forwarded-proto'] = proto;
    headers['x-forwarded-host'] = host;
  }
  return headers;
}

/** The X-Forwarded-For hops up to and including the client (what the trusted proxies vouch for). */
function trustedChain(req: IncomingMessage, trustedProxies: number, client: string): string {
  const header = req.headers['x-forwarded-for'];
  const entries = (Array.isArray(header) ? header : header ? [header] : []).flatMap((value) => value.split(',')).map((entry) => entry.trim()).filter(Boolean);
  const hops = [...entries, req.socket.remoteAddress ?? ''];
  const index = Math.max(0, hops.length - 1 - trustedProxies);
  return [...hops.slice(0, index), client].join(', ');
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim() || undefined;
}

/** The request's headers as a service may see them: no hop-by-hop headers, no Sigil credentials, no principal from outside. */
export function headersForService(req: IncomingMessage, options: { keepAuthorization: boolean }): OutgoingHttpHeaders {
  const headers = endToEndHeaders(req.headers);
  delete headers.host;
  delete headers.expect; // 100-continue was handled between the client and the gateway
  delete headers[PRINCIPAL_HEADER];
  delete headers[STRATA.principalHeader];
  delete headers[API_KEY_HEADER];
  if (!options.keepAuthorization) delete headers.authorization;
  const cookie = cookieWithoutSession(typeof headers.cookie === 'string' ? headers.cookie : Array.isArray(headers.cookie) ? headers.cookie.join('; ') : undefined);
  if (cookie) headers.cookie = cookie;
  else delete headers.cookie;
  return headers;
}
