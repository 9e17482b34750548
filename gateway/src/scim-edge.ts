import type { NextFunction, Request, Response } from 'express';
import { REQUEST_ID_HEADER } from '@sigil/kit/http';
import type { Logger } from '@sigil/kit/log';
import { resolveService, SCIM_PATH } from '@sigil/proto/routes';
import type { ServiceUrls } from './replicas.ts';
import { forwardingFacts, headersForService } from './forwarding.ts';
import { forward, type Upstream } from './proxy.ts';

export interface ScimEdgeDeps {
  serviceUrls: ServiceUrls;
  upstream: Upstream;
  trustedProxies: number;
  log: Logger;
}

const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** Refusals in SCIM's error format (RFC 7644 §3.12): identity providers read that, not problem+json. */
function sendScimError(res: Response, status: number, detail: string): void {
  res.status(status).type('application/scim+json').send(JSON.stringify({ schemas: [SCIM_ERROR], status: String(status), detail }));
}

/**
 * `/scim/v2`: identity providers' SCIM 2.0 requests, outside the OpenAPI contract. Their `Authorization: Bearer
 * sglscim_...` is the organization's SCIM token, not an API key: it goes to accounts untouched (like a signer's token
 * to signing) and accounts checks it. No principal is resolved or signed; the session cookie, `x-api-key` and any
 * principal from outside are stripped as everywhere.
 */
export function createScimEdge(deps: ScimEdgeDeps) {
  return function handle(req: Request, res: Response, next: NextFunction): void {
    if (req.path !== SCIM_PATH && !req.path.startsWith(`${SCIM_PATH}/`)) return next();
    res.locals.service = 'accounts';
    // Dot segments, encoded slashes, empty segments: never forwarded (the upstream could resolve them elsewhere).
    if (resolveService(req.path) !== 'accounts' || req.path.split('/').slice(1).includes('')) return sendScimError(res, 404, 'No SCIM endpoint exists at this path.');
    const baseUrl = deps.serviceUrls.accounts;
    if (!baseUrl) return sendScimError(res, 503, 'The accounts service is not available.');
    const headers = headersForService(req, { keepAuthorization: true });
    Object.assign(headers, forwardingFacts(req, deps.trustedProxies));
    forward(req, res, {
      baseUrl,
      headers,
      upstream: deps.upstream,
      responseHeaders: { [REQUEST_ID_HEADER]: String(res.locals.requestId) },
      onUnreachable: (error) => {
        deps.log.warn({ err: error, service: 'accounts' }, 'service unreachable');
        sendScimError(res, 502, 'The accounts service could not be reached.');
      },
    });
  };
}
