import { AppError } from '@sigil/kit/errors';
import { createServiceClient, type PrincipalSigner } from '@sigil/kit/auth';
import { linkForVisitorPath, visitorEnvelopePath, type LinkForVisitor, type VisitorEnvelope, type VisitorEnvelopeRequest } from '@sigil/proto/internal-links';
import { passOn } from './envelopes-client.ts';

/** The envelopes service's signing links as signing sees them (proto/src/internal-links.ts). */
export interface LinksClient {
  /** The link, or undefined when it is unknown or deleted. */
  link(linkId: string): Promise<LinkForVisitor | undefined>;
  /** The envelope of a verified visitor; envelopes' refusals (409 `link-paused`, 429, 402, 403) pass on as they are. */
  createEnvelope(linkId: string, visitor: VisitorEnvelopeRequest): Promise<VisitorEnvelope>;
}

export function createLinksClient(options: { baseUrl: string; signPrincipal: PrincipalSigner; timeoutMs?: number; fetch?: typeof fetch }): LinksClient {
  const send = createServiceClient({ target: 'envelopes', actorId: 'signing', ...options });
  // A visitor names no organization: the link does (as the gateway's own principal, 'platform').
  const call = (path: string, init: { method?: string; body?: unknown } = {}) => send(path, { organizationId: 'platform', mode: 'live', method: init.method, json: init.body });
  const problem = async (response: Response): Promise<AppError> => {
    const error = passOn(response.status, (await response.json().catch(() => ({}))) as Record<string, string>);
    const retryAfter = response.headers.get('retry-after');
    return retryAfter ? new AppError(error.code, error.message, { errors: error.errors, headers: { 'retry-after': retryAfter }, extensions: error.extensions }) : error;
  };

  return {
    async link(linkId) {
      const response = await call(linkForVisitorPath(linkId));
      if (response.status === 404) return undefined;
      if (!response.ok) throw await problem(response);
      return (await response.json()) as LinkForVisitor;
    },
    async createEnvelope(linkId, visitor) {
      const response = await call(visitorEnvelopePath(linkId), { method: 'POST', body: visitor });
      if (!response.ok) throw await problem(response);
      return (await response.json()) as VisitorEnvelope;
    },
  };
}
