import { AppError } from '@sigil/kit/errors';
import { createPublicFetch, fetchPublicUrl, systemResolver, UrlRefused, type PublicFetch, type Resolver, type UrlPolicy } from '@sigil/kit/http';

/** What SSO fetches from URLs an admin typed (IdP metadata, OIDC discovery, tokens, keys): 1 MB, 10 s, 3 redirects. */
export const OUTBOUND_LIMITS = { maxBytes: 1024 * 1024, timeoutMs: 10_000, maxRedirects: 3 } as const;

export interface SsoOutbound {
  policy: UrlPolicy;
  /** openid-client's `customFetch`: every request of an OIDC login goes through it. */
  fetch: PublicFetch;
}

/** Public https only, plus the deployment's allowed origins (`SSO_ALLOWED_ORIGINS`, e.g. a local IdP on loopback). */
export function createSsoOutbound(options: { allowedOrigins?: string[]; resolve?: Resolver } = {}): SsoOutbound {
  const policy: UrlPolicy = { allowedOrigins: options.allowedOrigins ?? [], resolve: options.resolve ?? systemResolver };
  return { policy, fetch: createPublicFetch({ policy, ...OUTBOUND_LIMITS }) };
}

/** The refusal of a URL as a 400 beside the field that held it. */
export function urlRefused(error: UrlRefused, pointer: string, what: string): AppError {
  return new AppError('validation-failed', `The ${what} ${error.message}.`, { errors: [{ pointer, detail: error.message }] });
}

/** GETs an IdP's metadata document (400 beside `pointer` when refused or unreachable). */
export async function fetchMetadataXml(outbound: SsoOutbound, url: string, pointer = '/body/url'): Promise<string> {
  try {
    const fetched = await fetchPublicUrl(url, { policy: outbound.policy, ...OUTBOUND_LIMITS, headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } });
    return fetched.body.toString('utf8');
  } catch (error) {
    if (error instanceof UrlRefused) throw urlRefused(error, pointer, 'metadata URL');
    throw error;
  }
}
