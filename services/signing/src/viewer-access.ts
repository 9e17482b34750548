import { AppError } from '@sigil/kit/errors';
import { sha256Hex } from '@sigil/kit/crypto';
import { randomBase62 } from '@sigil/kit/ids';
import { SIGIL } from '@sigil/proto/product';
import type { components } from '@sigil/proto/api/sigil';
import type { ViewerGrant } from '@sigil/proto/internal-viewers';
import type { ViewersClient } from './viewers-client.ts';

const LINK_TOKEN = new RegExp(`^${SIGIL.viewerLinkTokenPrefix}[A-Za-z0-9]{40}$`);
const ACCESS_TOKEN = new RegExp(`^${SIGIL.viewerAccessTokenPrefix}[A-Za-z0-9]{40}$`);

/**
 * Viewer credentials. Envelopes keeps both kinds by their SHA-256 (so a revocation stops them at once); this service
 * mints the raw access token, hands envelopes its hash, and asks envelopes who a token stands for on every request.
 */
export function createViewerAccess(deps: { viewers: ViewersClient }) {
  return {
    /** `POST /v1/viewer/exchange`: repeatable while the viewer is not revoked and the envelope not 30 days past its end. */
    async exchange(linkToken: string) {
      const accessToken = `${SIGIL.viewerAccessTokenPrefix}${randomBase62(40)}`;
      const grant = LINK_TOKEN.test(linkToken) ? await deps.viewers.exchange(sha256Hex(linkToken), sha256Hex(accessToken)) : undefined;
      if (!grant) throw new AppError('unauthorized', 'The viewer link is not valid: it was revoked, or the envelope ended more than 30 days ago.');
      // The contract's ViewerAccessToken allows more members than it fixes: the envelope it is for.
      return { object: 'viewer_access_token', accessToken, expiresAt: grant.expiresAt, envelopeId: grant.envelopeId } satisfies components['schemas']['ViewerAccessToken'];
    },

    /** The viewer behind an access token, or undefined (unknown, expired, revoked, past the grace period). */
    async resolve(token: string): Promise<ViewerGrant | undefined> {
      return ACCESS_TOKEN.test(token) ? deps.viewers.resolve(sha256Hex(token)) : undefined;
    },
  };
}
