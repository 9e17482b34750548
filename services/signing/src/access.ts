import { AppError } from '@sigil/kit/errors';
import { sha256Hex } from '@sigil/kit/crypto';
import { randomBase62 } from '@sigil/kit/ids';
import { SIGIL } from '@sigil/proto/product';
import type { components } from '@sigil/proto/api/sigil';
import type { Db } from './db.ts';
import type { EnvelopesClient, SignerRef } from './envelopes-client.ts';

const SESSION_TOKEN = new RegExp(`^${SIGIL.sessionTokenPrefix}[A-Za-z0-9_-]{20,200}$`);
const ACCESS_TOKEN = new RegExp(`^${SIGIL.accessTokenPrefix}[A-Za-z0-9]{40}$`);

export interface AccessDeps {
  db: Db;
  envelopes: EnvelopesClient;
  clock: () => Date;
  accessTokenTtlSeconds: number;
}

export interface Signer extends SignerRef {
  expiresAt: Date;
  /** The SHA-256 of the access token: one-time codes belong to this session. */
  tokenHash: string;
  /** Whether a one-time code was verified in this session. */
  verified: boolean;
}

/**
 * Signer credentials: a `sgls_` session token is exchanged once (through envelopes, which owns it) for a `sgla_` access
 * token kept here by its SHA-256, valid for `accessTokenTtlSeconds` and never beyond the envelope's expiry.
 */
export function createAccess(deps: AccessDeps) {
  /** Spends a session token for an access token; undefined when the token is not valid. Envelopes being down throws. */
  async function grant(sessionToken: string): Promise<{ token: string; signer: Signer } | undefined> {
    if (!SESSION_TOKEN.test(sessionToken)) return undefined;
    const session = await deps.envelopes.exchange(sha256Hex(sessionToken));
    if (!session) return undefined;
    const now = deps.clock().getTime();
    const expiresAt = new Date(Math.min(now + deps.accessTokenTtlSeconds * 1000, new Date(session.envelopeExpiresAt).getTime()));
    const token = `${SIGIL.accessTokenPrefix}${randomBase62(40)}`;
    const ref = { organizationId: session.organizationId, testMode: session.testMode, envelopeId: session.envelopeId, recipientId: session.recipientId, expiresAt };
    const tokenHash = sha256Hex(token);
    await deps.db.accessToken.create({ data: { tokenHash, ...ref } });
    return { token, signer: { ...ref, tokenHash, verified: false } };
  }

  return {
    /** `POST /v1/signing/exchange`. */
    async exchange(sessionToken: string) {
      const granted = await grant(sessionToken);
      if (!granted) throw invalidToken();
      const { token, signer } = granted;
      // The contract's SigningAccessToken allows more members than it fixes: the envelope and recipient it is for.
      return {
        object: 'signing_access_token',
        accessToken: token,
        expiresAt: signer.expiresAt.toISOString(),
        envelopeId: signer.envelopeId,
        recipientId: signer.recipientId,
      } satisfies components['schemas']['SigningAccessToken'];
    },

    /**
     * The signer behind a bearer token: an access token while it lasts, or a session token, which this spends (it works
     * for that one request, as if exchanged). Undefined when neither holds.
     */
    async resolve(bearer: string): Promise<Signer | undefined> {
      if (ACCESS_TOKEN.test(bearer)) {
        const row = await deps.db.accessToken.findUnique({ where: { tokenHash: sha256Hex(bearer) } });
        if (!row || row.expiresAt.getTime() <= deps.clock().getTime()) return undefined;
        return { organizationId: row.organizationId, testMode: row.testMode, envelopeId: row.envelopeId, recipientId: row.recipientId, expiresAt: row.expiresAt, tokenHash: row.tokenHash, verified: row.verifiedAt !== null };
      }
      if (SESSION_TOKEN.test(bearer)) return (await grant(bearer))?.signer;
      return undefined;
    },
  };
}

export type Access = ReturnType<typeof createAccess>;

function invalidToken(): AppError {
  return new AppError('unauthorized', 'The signing token is not valid: it was used, replaced or has expired.');
}
