import { enqueueJob, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import type { Role } from '@sigil/kit/auth';
import type { Logger } from '@sigil/kit/log';
import { composeMessage, type MailBranding, type Mailer } from '@sigil/mail';
import { JOBS_STREAM, jobSubject } from '@sigil/proto/events';
import { acceptInvitationUrl } from '@sigil/proto/routes';
import type { Db, Tx } from './db.ts';
import { randomToken, sha256Hex } from './tokens.ts';
import { asRole } from './views.ts';

/**
 * Invitations are e-mailed by a job on the jobs stream, recorded in the invitation's own transaction (the outbox):
 * an invitation that committed is e-mailed even if the process dies at once, and a refused or unreachable SMTP server
 * only delays the e-mail (the job is retried; the invitation and the token the API returned stay valid meanwhile).
 */
export const invitationMailJobName = (cell = ''): string => `${cell ? `${cell.toLowerCase()}.` : ''}accounts.invitation-mail`;

/** Quick retries first, then every ten minutes. */
export const INVITATION_MAIL_RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000] as const;

/** More than a week of ten-minute retries: an invitation lives 7 days, and an expired one is not e-mailed. */
const MAX_DELIVERIES = 1_100;

const ROLE_WITH_ARTICLE: Record<Role, string> = { owner: 'an owner', admin: 'an admin', member: 'a member', viewer: 'a viewer' };

export interface InvitationMailDeps {
  db: Db;
  mailer: Mailer;
  /** The gateway's public URL: the e-mailed link opens the dashboard's accept page there. */
  publicUrl: string;
  clock: () => Date;
  /** The organization's e-mail branding in effect (branding/branding.ts); unbranded without it. */
  branding?: (organizationId: string) => Promise<MailBranding>;
  log?: Logger;
}

/** Branding never holds up an invitation: unreadable, the e-mail goes out unbranded. */
async function brandingOf(deps: InvitationMailDeps, organizationId: string): Promise<MailBranding | undefined> {
  try {
    return await deps.branding?.(organizationId);
  } catch (error) {
    deps.log?.warn({ err: error, organizationId }, 'the organization branding could not be read: the invitation goes out unbranded');
    return undefined;
  }
}

/** Records, in the transaction that creates the invitation, the job that e-mails it (once per invitation). */
export async function enqueueInvitationMail(tx: Tx, invitationId: string, cell?: string): Promise<void> {
  await enqueueJob(tx, { name: invitationMailJobName(cell), id: `invitation-mail-${invitationId}`, data: { invitationId } });
}

/**
 * E-mails a pending invitation a link of its own: a fresh token, stored as its SHA-256 beside the one the API returned
 * (either one accepts the invitation), so no token ever rests anywhere in clear. The token's hash is committed before
 * the e-mail leaves (an invitee who opens it at once can accept); `emailedAt` commits after the send. A failed send
 * puts the earlier hash back and throws (the job is retried); a job delivered again after its e-mail committed finds
 * `emailedAt` and sends nothing. Revoked, accepted or expired invitations get no e-mail.
 */
export async function sendInvitationMail(deps: InvitationMailDeps, invitationId: string): Promise<'sent' | 'skipped'> {
  return deps.db.$transaction(
    async (tx) => {
      // Two deliveries of one job (an acknowledgement that came too late) wait for each other here: an advisory lock,
      // not the row's, so the token's hash can commit on another connection while this transaction is open.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('accounts.invitation-mail'), hashtext(${invitationId}))`;
      const invitation = await tx.invitation.findUnique({ where: { id: invitationId }, include: { organization: true } });
      const now = deps.clock();
      if (!invitation || invitation.emailedAt || invitation.acceptedAt || invitation.revokedAt || invitation.expiresAt <= now) return 'skipped';
      const token = randomToken();
      const emailTokenHash = sha256Hex(token);
      await deps.db.invitation.update({ where: { id: invitationId }, data: { emailTokenHash } });
      try {
        const inviter = await tx.user.findUnique({ where: { id: invitation.invitedBy }, select: { name: true } });
        const message = composeMessage({
          kind: 'invitation',
          organizationName: invitation.organization.name,
          inviterName: inviter?.name ?? `Someone at ${invitation.organization.name}`,
          role: ROLE_WITH_ARTICLE[asRole(invitation.role)],
          url: acceptInvitationUrl(deps.publicUrl, token),
          expiresAt: invitation.expiresAt.toISOString(),
        }, await brandingOf(deps, invitation.organizationId));
        await deps.mailer.send({ to: invitation.email, message });
      } catch (error) {
        await deps.db.invitation
          .updateMany({ where: { id: invitationId, emailTokenHash }, data: { emailTokenHash: invitation.emailTokenHash } })
          .catch((cause: unknown) => deps.log?.warn({ err: cause, invitationId }, 'an unsent invitation link could not be taken back'));
        throw error;
      }
      await tx.invitation.update({ where: { id: invitationId }, data: { emailedAt: now } });
      return 'sent';
    },
    // The SMTP exchange happens inside the transaction.
    { timeout: 60_000 },
  );
}

function decodeInvitationMailJob(payload: unknown): { id: string; invitationId: string } {
  const job = payload as { id?: unknown; invitationId?: unknown } | null;
  if (typeof job?.id !== 'string' || typeof job.invitationId !== 'string' || !/^inv_[A-Za-z0-9]{10,40}$/.test(job.invitationId)) {
    throw new Error('not an invitation e-mail job: { id, invitationId } expected');
  }
  return { id: job.id, invitationId: job.invitationId };
}

/** The invitation e-mails of every replica share one durable consumer on the jobs stream. */
export function startInvitationMailConsumer(
  bus: Bus,
  deps: InvitationMailDeps & { log: Logger },
  options: { cell?: string; retryDelaysMs?: readonly number[] } = {},
): Promise<RunningConsumer> {
  return bus.consume({
    stream: JOBS_STREAM,
    durable: `${options.cell ?? ''}accounts-invitation-mail`,
    subjects: [jobSubject(invitationMailJobName(options.cell))],
    concurrency: 2,
    ackWaitMs: 120_000,
    maxDeliver: MAX_DELIVERIES,
    retryDelaysMs: options.retryDelaysMs ?? INVITATION_MAIL_RETRY_DELAYS_MS,
    log: deps.log,
    decode: decodeInvitationMailJob,
    handle: async (message) => {
      const outcome = await sendInvitationMail(deps, message.data.invitationId);
      deps.log.info({ invitationId: message.data.invitationId, outcome, attempt: message.deliveryCount }, 'invitation e-mail');
    },
  });
}
