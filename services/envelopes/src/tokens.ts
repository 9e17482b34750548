import { AppError, notFound } from '@sigil/kit/errors';
import { sha256Hex } from '@sigil/kit/crypto';
import { randomBase62 } from '@sigil/kit/ids';
import type { Principal } from '@sigil/kit/auth';
import { SIGIL } from '@sigil/proto/product';
import type { components } from '@sigil/proto/api/sigil';
import type { ExchangedSession } from '@sigil/proto/internal-envelopes';
import { visibleTo } from './caller.ts';
import type { Db, Tx } from './db.ts';
import { isRecipientsTurn } from './state.ts';

export const TOKEN_PATTERN = new RegExp(`^${SIGIL.sessionTokenPrefix}[A-Za-z0-9]{40}$`);

export interface TokenDeps {
  db: Db;
  clock: () => Date;
  /** Lifetime of a session minted through the API (embedded or hosted signing). */
  sessionTtlSeconds: number;
}

/** The hosted signing page of a token under a public base URL (the gateway's). */
export const signingPageUrl = (publicUrl: string, token: string): string => `${publicUrl.replace(/\/+$/, '')}/sign#token=${token}`;

/** Mints a single-use `sgls_` token in the caller's transaction; only its SHA-256 is stored. */
export async function mintToken(tx: Tx, input: { envelopeId: string; recipientId: string; purpose: 'link' | 'session'; expiresAt: Date }): Promise<string> {
  const token = `${SIGIL.sessionTokenPrefix}${randomBase62(40)}`;
  await tx.signingToken.create({ data: { tokenHash: sha256Hex(token), ...input } });
  return token;
}

/**
 * Mints a token committed at once, in its own short transaction: the e-mail that carries it can be opened the moment it
 * is sent, before the caller's transaction commits (a fast reader would otherwise exchange a token nobody can see yet).
 * Waiting for a lock (the recipient's row held `FOR UPDATE` by another transaction) gives up after 5 s rather than
 * waiting on its own caller.
 */
export async function mintCommittedToken(db: Db, input: { envelopeId: string; recipientId: string; purpose: 'link' | 'session'; expiresAt: Date }): Promise<string> {
  return db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(`SET LOCAL lock_timeout = '5s'`);
    return mintToken(tx, input);
  });
}

/** A committed token whose e-mail could not be sent: it never worked for anyone, so it goes. */
export async function discardToken(db: Db, token: string): Promise<void> {
  await db.signingToken.deleteMany({ where: { tokenHash: sha256Hex(token) } });
}

/** Every unused token of a recipient stops working (a resend, a decline, the end of the envelope), except `keep`. */
export async function revokeTokens(tx: Tx, recipientId: string, now: Date, purpose?: 'link' | 'session', keep?: string): Promise<void> {
  await tx.signingToken.updateMany({
    where: { recipientId, usedAt: null, revokedAt: null, ...(purpose ? { purpose } : {}), ...(keep ? { tokenHash: { not: sha256Hex(keep) } } : {}) },
    data: { revokedAt: now },
  });
}

export function createTokenService(deps: TokenDeps) {
  return {
    /** `POST /v1/envelopes/{id}/sessions`: a short-lived single-use session for a recipient whose turn it is. */
    async createSession(principal: Principal, envelopeId: string, recipientId: string, publicUrl: string): Promise<components['schemas']['SigningSession']> {
      return deps.db.$transaction(async (tx) => {
        const envelope = await tx.envelope.findFirst({ where: { ...visibleTo(principal), id: envelopeId }, include: { recipients: true } });
        if (!envelope) throw notFound(`Envelope ${envelopeId}`);
        const recipient = envelope.recipients.find((r) => r.id === recipientId);
        if (!recipient) throw new AppError('validation-failed', `recipient is not a recipient of envelope ${envelopeId}.`, { errors: [{ pointer: '/body/recipient', detail: `is not a recipient of envelope ${envelopeId}` }] });
        if (!isRecipientsTurn(envelope.status, recipient.status)) {
          throw new AppError('not-recipients-turn', `It is not recipient ${recipientId}'s turn to sign (envelope ${envelope.status}, recipient ${recipient.status}).`);
        }
        const now = deps.clock();
        const expiresAt = new Date(Math.min(now.getTime() + deps.sessionTtlSeconds * 1000, envelope.expiresAt.getTime()));
        const token = await mintToken(tx, { envelopeId, recipientId, purpose: 'session', expiresAt });
        // The url is the hosted signing page with the token in the fragment, so it never reaches a server log.
        return { object: 'signing_session', token, url: signingPageUrl(publicUrl, token), envelopeId, recipientId, expiresAt: expiresAt.toISOString() };
      });
    },

    /**
     * Spends a token for the signing service, atomically: of any number of concurrent exchanges of one token, one gets
     * the session; an unknown, used, revoked or expired token (or one whose recipient's turn is over) is 401.
     */
    async exchange(tokenHash: string): Promise<ExchangedSession> {
      const now = deps.clock();
      return deps.db.$transaction(async (tx) => {
        const spent = await tx.signingToken.updateMany({ where: { tokenHash, usedAt: null, revokedAt: null, expiresAt: { gt: now } }, data: { usedAt: now } });
        const token = spent.count === 1 ? await tx.signingToken.findUnique({ where: { tokenHash }, include: { recipient: { include: { envelope: true } } } }) : null;
        if (!token || !isRecipientsTurn(token.recipient.envelope.status, token.recipient.status)) throw new AppError('unauthorized', 'The signing link is not valid: it was used, replaced or has expired.');
        const { envelope } = token.recipient;
        return {
          organizationId: envelope.organizationId,
          testMode: envelope.testMode,
          envelopeId: envelope.id,
          recipientId: token.recipientId,
          purpose: token.purpose as ExchangedSession['purpose'],
          envelopeExpiresAt: envelope.expiresAt.toISOString(),
        };
      });
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
