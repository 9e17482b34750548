import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { enqueueEvent } from '@sigil/kit/bus';
import { AppError } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import { brandingOrNone, type BrandingCache } from '@sigil/kit/branding';
import type { Logger } from '@sigil/kit/log';
import { brandedName, composeMessage, type Mailer, type SmsProvider } from '@sigil/mail';
import type { components } from '@sigil/proto/api/sigil';
import type { Signer } from './access.ts';
import type { Db } from './db.ts';
import type { Actor, EnvelopesClient } from './envelopes-client.ts';

/** The spec's limits: 5 codes per 15 minutes per session, 5 attempts per code. Codes live 10 minutes. */
export const OTP_LIMITS = { codesPerWindow: 5, windowMs: 15 * 60_000, attemptsPerCode: 5, lifetimeMs: 10 * 60_000 } as const;

export interface OtpDeps {
  db: Db;
  envelopes: EnvelopesClient;
  mailer: Mailer;
  sms: SmsProvider;
  clock: () => Date;
  /** The organization's e-mail branding (accounts', cached); codes go out unbranded without it. */
  branding?: Pick<BrandingCache, 'get'>;
  log?: Logger;
}

const hashOf = (challengeId: string, code: string) => createHash('sha256').update(`${challengeId}:${code}`).digest();

function rateLimited(detail: string, retryAfterMs: number): AppError {
  return new AppError('rate-limited', detail, { headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) } });
}

/** One-time codes for recipients whose envelope asks for verification (`email` or `sms`). */
export function createOtpService(deps: OtpDeps) {
  /** The audit trail's record of a code sent, verified or failed. */
  const record = (signer: Signer, type: 'otp.sent' | 'otp.verified' | 'otp.failed', data: Record<string, unknown>, conn: Parameters<typeof enqueueEvent>[0] = deps.db) =>
    enqueueEvent(conn, { type, organizationId: signer.organizationId, data: { envelopeId: signer.envelopeId, testMode: signer.testMode, recipientId: signer.recipientId, ...data } as never });
  return {
    /** `POST /v1/signing/otp`: a new 6-digit code by the recipient's channel; the earlier ones of the session stop working. */
    async send(signer: Signer, requested: components['schemas']['SendSigningOtp']['channel'], actor: Actor) {
      const view = await deps.envelopes.view(signer);
      const { verification, phone, email, name } = view.recipient;
      if (verification === 'none') throw new AppError('conflict', 'This recipient needs no one-time code.');
      const channel = requested ?? verification;
      if (channel !== verification) throw new AppError('validation-failed', `channel must be ${verification}: this recipient verifies by ${verification}.`, { errors: [{ pointer: '/body/channel', detail: `must be ${verification}` }] });
      const now = deps.clock();
      const recent = await deps.db.otpChallenge.findMany({ where: { accessTokenHash: signer.tokenHash, createdAt: { gt: new Date(now.getTime() - OTP_LIMITS.windowMs) } }, orderBy: { createdAt: 'asc' } });
      if (recent.length >= OTP_LIMITS.codesPerWindow) {
        throw rateLimited(`At most ${OTP_LIMITS.codesPerWindow} codes per 15 minutes; try again later.`, (recent[0] as { createdAt: Date }).createdAt.getTime() + OTP_LIMITS.windowMs - now.getTime());
      }
      const id = newId('otp');
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const expiresAt = new Date(now.getTime() + OTP_LIMITS.lifetimeMs);
      await deps.db.otpChallenge.create({ data: { id, accessTokenHash: signer.tokenHash, recipientId: signer.recipientId, channel, codeHash: hashOf(id, code).toString('hex'), expiresAt, createdAt: now } });
      const minutes = OTP_LIMITS.lifetimeMs / 60_000;
      // Test mode e-mails members of the organization only (as envelopes' own e-mails): anyone else gets nothing.
      if (channel === 'email' && view.envelope.testMode && !view.recipient.member) {
        await enqueueEvent(deps.db, { type: 'email.suppressed', organizationId: signer.organizationId, data: { envelopeId: signer.envelopeId, testMode: true, recipientId: signer.recipientId, kind: 'otp_code', address: email } });
        return { object: 'otp_challenge' as const, channel, expiresAt: expiresAt.toISOString(), delivered: false };
      }
      const branding = await brandingOrNone(deps.branding, signer.organizationId, deps.log);
      if (channel === 'sms') {
        if (!phone) throw new AppError('conflict', 'This recipient has no phone number for SMS codes.');
        await deps.sms.send({ to: phone, text: `${code} is your code to sign "${view.envelope.title}" from ${brandedName(view.envelope.organizationName, branding)}. It is valid for ${minutes} minutes.` });
      } else {
        await deps.mailer.send({ to: email, message: composeMessage({ kind: 'otp_code', code, minutes, organizationName: view.envelope.organizationName, envelopeTitle: view.envelope.title, recipientName: name, testMode: view.envelope.testMode }, branding) });
      }
      await record(signer, 'otp.sent', { channel, ...actor });
      return { object: 'otp_challenge' as const, channel, expiresAt: expiresAt.toISOString(), delivered: true };
    },

    /** `POST /v1/signing/otp/verify`: the session's latest code; five wrong tries end it (429: ask for a new code). */
    async verify(signer: Signer, code: string, actor: Actor) {
      const now = deps.clock();
      const challenge = await deps.db.otpChallenge.findFirst({ where: { accessTokenHash: signer.tokenHash, verifiedAt: null }, orderBy: { createdAt: 'desc' } });
      if (!challenge) throw new AppError('conflict', 'No code is waiting to be verified: ask for one first (POST /v1/signing/otp).');
      if (challenge.expiresAt <= now) throw new AppError('validation-failed', 'The code has expired: ask for a new one.', { errors: [{ pointer: '/body/code', detail: 'has expired' }] });
      if (challenge.attempts >= OTP_LIMITS.attemptsPerCode) throw rateLimited('Too many wrong codes: ask for a new code.', 1000);
      if (!timingSafeEqual(hashOf(challenge.id, code), Buffer.from(challenge.codeHash, 'hex'))) {
        const attempts = challenge.attempts + 1;
        await deps.db.otpChallenge.update({ where: { id: challenge.id }, data: { attempts } });
        await record(signer, 'otp.failed', { channel: challenge.channel as 'email', attempts, ...actor });
        if (attempts >= OTP_LIMITS.attemptsPerCode) throw rateLimited('Too many wrong codes: ask for a new code.', 1000);
        const left = OTP_LIMITS.attemptsPerCode - attempts;
        throw new AppError('validation-failed', `The code is not the one we sent (${left} ${left === 1 ? 'try' : 'tries'} left).`, { errors: [{ pointer: '/body/code', detail: 'is not the code that was sent' }] });
      }
      await deps.db.$transaction(async (tx) => {
        await tx.otpChallenge.update({ where: { id: challenge.id }, data: { verifiedAt: now } });
        await tx.accessToken.update({ where: { tokenHash: signer.tokenHash }, data: { verifiedAt: now } });
        await record(signer, 'otp.verified', { channel: challenge.channel as 'email', ...actor }, tx);
      });
      return { object: 'otp_verification' as const, verified: true as const, channel: challenge.channel };
    },
  };
}

export type OtpService = ReturnType<typeof createOtpService>;
