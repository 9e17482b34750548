import { setTimeout as delay } from 'node:timers/promises';
import type { Principal } from '@sigil/kit/auth';
import { enqueueEvent } from '@sigil/kit/bus';
import { featureNotOnPlan, type EntitlementsCache } from '@sigil/kit/entitlements';
import { AppError, notFound } from '@sigil/kit/errors';
import type { components } from '@sigil/proto/api/sigil';
import type { LinkForVisitor, SigningLinkLimits, VisitorEnvelope, VisitorEnvelopeRequest, VisitorField } from '@sigil/proto/internal-links';
import type { EnvelopeCreator } from './create.ts';
import type { Db, Tx } from './db.ts';
import type { SigningLink } from './generated/prisma/client.ts';
import { brandingOrNone, type BrandingCache } from '@sigil/kit/branding';
import { brandedName } from '@sigil/mail';
import { organizationName } from './mail/outbox-mail.ts';
import { linkUsage, startOfUtcDay } from './signing-link-views.ts';
import { mintToken, signingPageUrl } from './tokens.ts';

type CreateEnvelope = components['schemas']['CreateEnvelope'];

export interface LinkVisitorDeps {
  db: Db;
  creator: EnvelopeCreator;
  clock: () => Date;
  entitlements?: EntitlementsCache;
  /** The organization's branding: the link page shows its display name and logo. */
  branding?: Pick<BrandingCache, 'get'>;
  /** Lifetime of the visitor's signing session (as sessions minted through the API). */
  sessionTtlSeconds: number;
  /** How long the answer waits for the document to be rendered, so the session opens at once (default 15 s). */
  renderWaitMs?: number;
}

const DAY_MS = 86_400_000;

function dailyCapReached(cap: number, now: Date): AppError {
  const retryAfter = Math.max(1, Math.ceil((startOfUtcDay(now).getTime() + DAY_MS - now.getTime()) / 1000));
  return new AppError('rate-limited', `This link takes at most ${cap} ${cap === 1 ? 'signer' : 'signers'} a day; try again tomorrow (UTC).`, { headers: { 'retry-after': String(retryAfter) } });
}

/**
 * The visitor's side of a signing link, for the signing service (proto/src/internal-links.ts): what the link shows, and
 * the envelope of a visitor whose e-mail address signing verified.
 */
export function createLinkVisitors(deps: LinkVisitorDeps) {
  async function usable(id: string): Promise<SigningLink> {
    const link = await deps.db.signingLink.findFirst({ where: { id, deletedAt: null } });
    if (!link) throw notFound(`Signing link ${id}`);
    return link;
  }

  /** In the creating transaction: under the link's row lock the daily cap is counted exactly, then the use is recorded. */
  async function claimUse(tx: Tx, link: SigningLink, envelopeId: string, now: Date): Promise<void> {
    const [locked] = await tx.$queryRawUnsafe<Array<{ status: string; deleted_at: Date | null }>>('SELECT status, deleted_at FROM signing_links WHERE id = $1 FOR UPDATE', link.id);
    if (!locked || locked.deleted_at) throw notFound(`Signing link ${link.id}`);
    if (locked.status !== 'active') throw new AppError('link-paused', 'This signing link is paused by its owner.');
    if (link.dailyCap !== null) {
      const today = await tx.signingLinkUse.count({ where: { signingLinkId: link.id, createdAt: { gte: startOfUtcDay(now) } } });
      if (today >= link.dailyCap) throw dailyCapReached(link.dailyCap, now);
    }
    await tx.signingLinkUse.create({ data: { envelopeId, signingLinkId: link.id, createdAt: now } });
  }

  async function waitForRender(envelopeId: string): Promise<void> {
    const until = Date.now() + (deps.renderWaitMs ?? 15_000);
    while (Date.now() < until) {
      const row = await deps.db.envelope.findUnique({ where: { id: envelopeId }, select: { status: true } });
      if (row?.status !== 'rendering') return;
      await delay(100);
    }
  }

  return {
    async forVisitor(id: string): Promise<LinkForVisitor> {
      const link = await usable(id);
      const usage = await linkUsage(deps.db, [id], deps.clock());
      const branding = await brandingOrNone(deps.branding, link.organizationId);
      const limits: SigningLinkLimits = { perEmailPerDay: link.perEmailPerDay, perIpPerHour: link.perIpPerHour, dailyCap: link.dailyCap };
      return {
        id,
        organizationId: link.organizationId,
        testMode: link.testMode,
        status: link.status as LinkForVisitor['status'],
        title: link.title,
        organizationName: brandedName(await organizationName(deps.db, link.organizationId), branding),
        logoUrl: branding?.logoUrl ?? null,
        fields: link.visitorFields as unknown as VisitorField[],
        limits,
        usedToday: usage.get(id)?.today ?? 0,
      };
    },

    /**
     * Creates the envelope of the link's template version with the visitor as its role's recipient (embedded), in the
     * link's mode, and answers a signing session for them once the document is rendered (or after the wait, a session
     * that opens as soon as it is). Free's 402 on live envelopes holds as for any envelope; the daily cap is a 429.
     */
    async createEnvelope(id: string, visitor: VisitorEnvelopeRequest): Promise<VisitorEnvelope> {
      const link = await usable(id);
      if (link.status !== 'active') throw new AppError('link-paused', 'This signing link is paused by its owner.');
      if (deps.entitlements) {
        const entitlements = await deps.entitlements.get(link.organizationId);
        if (!entitlements.features.signingLinks) throw featureNotOnPlan(entitlements, 'signingLinks', 'This signing link is not available right now.');
      }
      const principal: Principal = { kind: 'service', organizationId: link.organizationId, actorId: link.id, mode: link.testMode ? 'test' : 'live', permissions: [] };
      const input: CreateEnvelope = {
        template: link.templateId,
        version: String(link.templateVersion),
        recipients: [...(link.recipients as NonNullable<CreateEnvelope['recipients']>), { role: link.role, name: visitor.name, email: visitor.email, delivery: 'embedded' }],
        variables: link.variables as CreateEnvelope['variables'],
        cc: link.cc as CreateEnvelope['cc'],
        metadata: { signingLink: link.id },
      };
      let answer: { recipientId: string; token: string; expiresAt: Date } | undefined;
      const created = await deps.creator.create(principal, input, {
        dryRun: false,
        testModeFlag: undefined,
        afterInsert: async (tx, envelope) => {
          const now = deps.clock();
          await claimUse(tx, link, envelope.id, now);
          const recipient = envelope.recipients.find((r) => r.role === link.role) as { id: string };
          const expiresAt = new Date(Math.min(now.getTime() + deps.sessionTtlSeconds * 1000, new Date(envelope.expiresAt).getTime()));
          answer = { recipientId: recipient.id, token: await mintToken(tx, { envelopeId: envelope.id, recipientId: recipient.id, purpose: 'session', expiresAt }), expiresAt };
          await enqueueEvent(tx, { type: 'signing_link.used', organizationId: link.organizationId, data: { envelopeId: envelope.id, signingLinkId: link.id, recipientId: recipient.id, testMode: link.testMode, envelope } });
        },
      });
      if (created.kind !== 'created' || !answer) throw new AppError('internal', 'The envelope of the signing link was not created.');
      await waitForRender(created.envelope.id);
      const { recipientId, token, expiresAt } = answer;
      return {
        envelopeId: created.envelope.id,
        recipientId,
        session: { object: 'signing_session', token, url: signingPageUrl(visitor.publicUrl, token), envelopeId: created.envelope.id, recipientId, expiresAt: expiresAt.toISOString() },
      };
    },
  };
}

export type LinkVisitors = ReturnType<typeof createLinkVisitors>;
