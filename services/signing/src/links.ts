import { timingSafeEqual } from 'node:crypto';
import { AppError, notFound } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import type { LinkForVisitor } from '@sigil/proto/internal-links';
import type { Db } from './db.ts';
import { dailyCapReached, type CapHeaders, type LinkCaps } from './link-caps.ts';
import { LINK_CODES_DUE, linkCodeHash, type LinkCodeMail } from './link-code-mail.ts';
import type { LinksClient } from './links-client.ts';

/** api-decisions "Signing links": a 6-digit code, valid 10 minutes, 5 attempts. */
export const LINK_CODE = { lifetimeMs: 10 * 60_000, attempts: 5 } as const;

export interface LinkServiceDeps {
  db: Db;
  links: LinksClient;
  caps: LinkCaps;
  /** Wakes this replica's code sender (the others hear the database's notification). */
  wakeCodeSender: () => void;
  clock: () => Date;
}

export interface Visitor {
  name?: string;
  email: string;
  /** The client's address (`clientAddress`), for `perIpPerHour`. */
  address: string;
}

const paused = () => new AppError('link-paused', 'This signing link is paused by its owner: it takes no new signers for now.');

/** The public side of always-on signing links (`/v1/links/*`): what a visitor sees, their e-mail check, the envelope. */
export function createLinkService(deps: LinkServiceDeps) {
  async function activeLink(id: string): Promise<LinkForVisitor> {
    const link = await deps.links.link(id);
    if (!link) throw notFound(`Signing link ${id}`);
    if (link.status !== 'active') throw paused();
    return link;
  }

  async function findVerification(linkId: string, input: { verification?: string; email?: string }) {
    const email = input.email?.trim().toLowerCase();
    const found = input.verification
      ? await deps.db.linkVerification.findFirst({ where: { id: input.verification, signingLinkId: linkId, ...(email ? { email } : {}) } })
      : email
        ? await deps.db.linkVerification.findFirst({ where: { signingLinkId: linkId, email }, orderBy: { createdAt: 'desc' } })
        : null;
    if (!found) throw notFound(`No code was sent for this link${input.verification ? ` under verification ${input.verification}` : ' to that address'}: start again`);
    return found;
  }

  /** A wrong code: one attempt spent, atomically; the fifth ends the verification. */
  async function wrongCode(id: string, attempts: number): Promise<AppError> {
    await deps.db.linkVerification.updateMany({ where: { id, attempts: { lt: LINK_CODE.attempts } }, data: { attempts: { increment: 1 } } });
    const left = Math.max(0, LINK_CODE.attempts - attempts - 1);
    if (left === 0) return new AppError('rate-limited', 'Too many wrong codes: start again to get a new code.', { headers: { 'Retry-After': '1' }, extensions: { attemptsLeft: 0 } });
    return new AppError('validation-failed', `The code is not the one we sent (${left} ${left === 1 ? 'try' : 'tries'} left).`, { errors: [{ pointer: '/body/code', detail: 'is not the code that was sent' }], extensions: { attemptsLeft: left } });
  }

  return {
    /** `GET /v1/links/{id}`: the title, the sender, the fields the visitor will fill. */
    async view(id: string) {
      const link = await activeLink(id);
      return {
        id: link.id,
        object: 'public_signing_link' as const,
        name: link.title,
        title: link.title,
        organizationName: link.organizationName,
        logoUrl: link.logoUrl,
        enabled: true,
        status: link.status,
        testMode: link.testMode,
        fields: link.fields,
      };
    },

    /**
     * `POST /v1/links/{id}/start`: the caps, then a code to the address. A new and a known address take the same path
     * and get the same answer, so the answer never tells whether an address was seen before.
     */
    async start(id: string, visitor: Visitor): Promise<{ body: { object: 'signing_link_challenge'; verification: string; expiresAt: string }; headers: CapHeaders }> {
      const link = await activeLink(id);
      const now = deps.clock();
      if (link.limits.dailyCap !== null && link.usedToday >= link.limits.dailyCap) throw dailyCapReached(link.limits.dailyCap, now);
      const email = visitor.email.trim().toLowerCase();
      const headers = await deps.caps.consume(id, link.limits, { email, address: visitor.address }, now);
      const verification = newId('lvf');
      const expiresAt = new Date(now.getTime() + LINK_CODE.lifetimeMs);
      const name = visitor.name?.trim() || email.split('@')[0] || email;
      const mail: LinkCodeMail = { organizationName: link.organizationName, title: link.title, testMode: link.testMode };
      // The code is made and mailed by the sender, off this request (an SMTP exchange takes tens of milliseconds).
      await deps.db.$transaction([
        deps.db.linkVerification.create({ data: { id: verification, signingLinkId: id, organizationId: link.organizationId, email, name, mail: { ...mail }, expiresAt, createdAt: now } }),
        deps.db.$executeRawUnsafe(`SELECT pg_notify('${LINK_CODES_DUE}', '')`),
      ]);
      deps.wakeCodeSender();
      return { body: { object: 'signing_link_challenge', verification, expiresAt: expiresAt.toISOString() }, headers };
    },

    /**
     * `POST /v1/links/{id}/verify`: the right code spends the verification and envelopes creates the visitor's
     * envelope and session; if envelopes refuses (paused, a cap, the plan), the verification stays usable.
     */
    async verify(id: string, input: { verification?: string; email?: string; code: string }, publicUrl: string) {
      const found = await findVerification(id, input);
      const now = deps.clock();
      if (found.usedAt) throw new AppError('conflict', `This code was already used${found.envelopeId ? ` (envelope ${found.envelopeId})` : ''}: start again to sign once more.`);
      if (found.expiresAt <= now) throw new AppError('validation-failed', 'The code has expired: start again to get a new one.', { errors: [{ pointer: '/body/code', detail: 'has expired' }] });
      if (found.attempts >= LINK_CODE.attempts) throw new AppError('rate-limited', 'Too many wrong codes: start again to get a new code.', { headers: { 'Retry-After': '1' }, extensions: { attemptsLeft: 0 } });
      if (!found.codeHash) throw new AppError('conflict', 'The code is still on its way: check your inbox in a moment.');
      if (!timingSafeEqual(linkCodeHash(found.id, input.code), Buffer.from(found.codeHash, 'hex'))) throw await wrongCode(found.id, found.attempts);
      const claimed = await deps.db.linkVerification.updateMany({ where: { id: found.id, usedAt: null }, data: { usedAt: now } });
      if (claimed.count === 0) throw new AppError('conflict', 'This code was already used: start again to sign once more.');
      let created;
      try {
        created = await deps.links.createEnvelope(id, { name: found.name, email: found.email, publicUrl });
      } catch (error) {
        await deps.db.linkVerification.update({ where: { id: found.id }, data: { usedAt: null } });
        throw error;
      }
      await deps.db.linkVerification.update({ where: { id: found.id }, data: { envelopeId: created.envelopeId } });
      const { token, url, expiresAt } = created.session;
      return { ...created.session, envelope: created.envelopeId, session: { token, url, expiresAt } };
    },
  };
}

export type LinkService = ReturnType<typeof createLinkService>;
