import { AppError, notFound } from '@sigil/kit/errors';
import { enqueueEvent } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import { newestFirst, oldestFirst, type ListPage } from '@sigil/kit/pagination';
import { type Principal, type Role } from '@sigil/kit/auth';
import { mayActOnRole } from '@sigil/proto/auth';
import type { Db, Tx } from './db.ts';
import { enqueueInvitationMail } from './invitation-mail.ts';
import { lockOrganization } from './organizations.ts';
import type { PasswordHasher } from './passwords.ts';
import { issueSession, revokeSessions, type IssuedSession } from './sessions.ts';
import type { Throttle } from './throttle.ts';
import type { components } from '@sigil/proto/api/sigil';
import { randomToken, sha256Hex } from './tokens.ts';
import { asRole, isUniqueViolation, requireEmail, toInvitationView, toMemberView, type InvitationView, type MemberView } from './views.ts';

export const INVITATION_LIFETIME_DAYS = 7;

export interface PageInput {
  limit: number;
  cursor?: string;
}

const ownerOnly = (what: string) => new AppError('forbidden', `Only an owner can ${what}.`);

async function countOwners(tx: Tx, organizationId: string): Promise<number> {
  return tx.membership.count({ where: { organizationId, role: 'owner' } });
}

async function findMember(tx: Tx, organizationId: string, id: string) {
  const membership = await tx.membership.findFirst({ where: { id, organizationId }, include: { user: true } });
  if (!membership) throw notFound(`Member ${id}`);
  return membership;
}

/** The last owner stays (409); the caller holds the organization lock (`lockOrganization`). */
export class LastOwnerError extends AppError {
  constructor() {
    super('conflict', 'The last owner cannot be removed; make another member an owner first.');
  }
}

/**
 * Removes a membership inside the caller's transaction (which holds `lockOrganization`): the last owner stays
 * (LastOwnerError), the member's sessions in this organization end, and `member.removed` makes the gateway drop them
 * from its cache. Removing a member in the dashboard and deprovisioning through SCIM both come through here.
 */
export async function deleteMembership(tx: Tx, membership: { id: string; organizationId: string; userId: string; role: string }, now: Date): Promise<void> {
  const { id, organizationId, userId } = membership;
  if (membership.role === 'owner' && (await countOwners(tx, organizationId)) <= 1) throw new LastOwnerError();
  await tx.membership.delete({ where: { id } });
  await revokeSessions(tx, { userId, organizationId }, now);
  await enqueueEvent(tx, { type: 'member.removed', organizationId, data: { memberId: id, userId } });
}

/** Changes a membership's role inside the caller's transaction and emits `member.role_changed`. */
export async function changeMembershipRole(tx: Tx, membership: { id: string; organizationId: string; userId: string; role: string }, role: Role): Promise<void> {
  await tx.membership.update({ where: { id: membership.id }, data: { role } });
  await enqueueEvent(tx, {
    type: 'member.role_changed',
    organizationId: membership.organizationId,
    data: { memberId: membership.id, userId: membership.userId, previousRole: asRole(membership.role), role },
  });
}

export interface MemberServiceDeps {
  db: Db;
  throttle: Throttle;
  passwords: PasswordHasher;
  clock: () => Date;
  /** The jobs' cell (CONSUMER_PREFIX), as the invitation e-mail consumer has it. */
  cell?: string;
}

/** Members, roles and invitations of one organization. Membership changes lock the organization row. */
export function createMemberService({ db, throttle, passwords, clock, cell }: MemberServiceDeps) {
  return {
    /** Oldest first. */
    async listMembers(organizationId: string, input: PageInput): Promise<ListPage<MemberView>> {
      const rows = await db.membership.findMany({
        where: {
          organizationId,
          ...oldestFirst.after(input.cursor),
        },
        include: { user: true },
        orderBy: oldestFirst.orderBy,
        take: input.limit + 1,
      });
      return oldestFirst.page(rows, input.limit, toMemberView);
    },

    /** Changes a role. Only owners grant or take away `owner`; the last owner stays an owner (409). */
    async updateMember(principal: Principal, id: string, role: Role): Promise<MemberView> {
      const organizationId = principal.organizationId;
      return db.$transaction(async (tx) => {
        await lockOrganization(tx, organizationId);
        const membership = await findMember(tx, organizationId, id);
        const previousRole = asRole(membership.role);
        if (previousRole === role) return toMemberView(membership);
        if (!mayActOnRole(principal.role, role) || !mayActOnRole(principal.role, previousRole)) {
          throw ownerOnly('grant or remove the owner role');
        }
        if (previousRole === 'owner' && (await countOwners(tx, organizationId)) <= 1) {
          throw new AppError('conflict', 'The last owner cannot be demoted; make another member an owner first.');
        }
        await changeMembershipRole(tx, membership, role);
        return toMemberView({ ...membership, role });
      });
    },

    /** Removes a member and ends their sessions in this organization. The last owner cannot be removed (409). */
    async removeMember(principal: Principal, id: string): Promise<void> {
      const organizationId = principal.organizationId;
      await db.$transaction(async (tx) => {
        await lockOrganization(tx, organizationId);
        const membership = await findMember(tx, organizationId, id);
        if (!mayActOnRole(principal.role, asRole(membership.role))) throw ownerOnly('remove an owner');
        await deleteMembership(tx, membership, clock());
      });
    },

    /**
     * Invites an e-mail address; the token is returned once and stored as its SHA-256. Valid for 7 days. The invitation
     * is e-mailed by a job recorded in the same transaction (invitation-mail.ts).
     */
    async createInvitation(principal: Principal, input: components['schemas']['CreateInvitation']): Promise<components['schemas']['InvitationCreated']> {
      const organizationId = principal.organizationId;
      const email = requireEmail(input.email);
      if (!mayActOnRole(principal.role, input.role)) throw ownerOnly('invite an owner');
      return db.$transaction(async (tx) => {
        await lockOrganization(tx, organizationId);
        const now = clock();
        const member = await tx.membership.findFirst({ where: { organizationId, user: { email } }, select: { id: true } });
        if (member) throw new AppError('conflict', `${email} is already a member of this organization.`, { errors: [{ pointer: '/body/email', detail: 'is already a member' }] });
        const pending = await tx.invitation.findFirst({
          where: { organizationId, email, acceptedAt: null, revokedAt: null, expiresAt: { gt: now } },
          select: { id: true },
        });
        if (pending) {
          throw new AppError('conflict', `A pending invitation for ${email} exists (${pending.id}); revoke it first.`, {
            errors: [{ pointer: '/body/email', detail: 'has a pending invitation' }],
          });
        }
        const token = randomToken();
        const invitation = await tx.invitation.create({
          data: {
            id: newId('inv'),
            organizationId,
            email,
            role: input.role,
            tokenHash: sha256Hex(token),
            invitedBy: principal.userId ?? principal.actorId,
            expiresAt: new Date(now.getTime() + INVITATION_LIFETIME_DAYS * 24 * 60 * 60 * 1000),
          },
        });
        await enqueueInvitationMail(tx, invitation.id, cell);
        return { ...toInvitationView(invitation), token };
      });
    },

    /** Pending invitations (not accepted, revoked or expired), newest first. */
    async listInvitations(organizationId: string, input: PageInput): Promise<ListPage<InvitationView>> {
      const rows = await db.invitation.findMany({
        where: {
          organizationId,
          acceptedAt: null,
          revokedAt: null,
          expiresAt: { gt: clock() },
          ...newestFirst.after(input.cursor),
        },
        orderBy: newestFirst.orderBy,
        take: input.limit + 1,
      });
      return newestFirst.page(rows, input.limit, toInvitationView);
    },

    /** Revoking twice is fine; an accepted invitation is no longer pending (404). */
    async revokeInvitation(organizationId: string, id: string): Promise<void> {
      const invitation = await db.invitation.findFirst({ where: { id, organizationId } });
      if (!invitation) throw notFound(`Invitation ${id}`);
      if (invitation.acceptedAt) throw new AppError('not-found', `Invitation ${id} was already accepted and is no longer pending.`);
      if (!invitation.revokedAt) await db.invitation.updateMany({ where: { id, revokedAt: null, acceptedAt: null }, data: { revokedAt: clock() } });
    },

    /**
     * Accepts an invitation: creates the user (or, when the e-mail already has an account, checks its password),
     * adds the membership and signs in to that organization. The token is the one the API returned or the e-mailed
     * link's. Unknown, revoked or expired tokens are 404; an accepted one is 409.
     */
    async acceptInvitation(input: components['schemas']['AcceptInvitation'], ip: string): Promise<IssuedSession> {
      await throttle.enforce([[throttle.rules.acceptInvitationPerIp, ip]]);
      const tokenHash = sha256Hex(input.token);
      const invitation = await db.invitation.findFirst({ where: { OR: [{ tokenHash }, { emailTokenHash: tokenHash }] } });
      if (!invitation || invitation.revokedAt || invitation.expiresAt <= clock()) {
        throw new AppError('not-found', 'The invitation is unknown, revoked or expired.');
      }
      if (invitation.acceptedAt) throw alreadyAccepted();

      const existing = await db.user.findUnique({ where: { email: invitation.email } });
      let passwordHash: string | undefined;
      if (existing) {
        if (!(await passwords.verify(input.password, existing.passwordHash))) {
          throw new AppError('conflict', 'An account with this e-mail address already exists; enter its password to join.', {
            errors: [{ pointer: '/body/password', detail: 'does not match the existing account' }],
          });
        }
      } else {
        passwordHash = await passwords.hash(input.password);
      }

      try {
        return await db.$transaction(async (tx) => {
          await lockOrganization(tx, invitation.organizationId);
          const now = clock();
          const claimed = await tx.invitation.updateMany({
            where: { id: invitation.id, acceptedAt: null, revokedAt: null, expiresAt: { gt: now } },
            data: { acceptedAt: now },
          });
          if (claimed.count !== 1) throw alreadyAccepted();
          const user =
            existing ??
            (await tx.user.create({
              data: { id: newId('usr'), email: invitation.email, name: input.name.trim(), passwordHash: passwordHash as string },
            }));
          const member = await tx.membership.findUnique({
            where: { organizationId_userId: { organizationId: invitation.organizationId, userId: user.id } },
          });
          if (member) throw new AppError('conflict', 'You are already a member of this organization.');
          const role = asRole(invitation.role);
          const membership = await tx.membership.create({
            data: { id: newId('mem'), organizationId: invitation.organizationId, userId: user.id, role },
          });
          await enqueueEvent(tx, {
            type: 'member.added',
            organizationId: invitation.organizationId,
            data: { memberId: membership.id, userId: user.id, email: user.email, role },
          });
          return issueSession(tx, user.id, invitation.organizationId, now);
        });
      } catch (error) {
        // Someone registered the same e-mail between our look-up and insert.
        if (isUniqueViolation(error)) throw new AppError('conflict', 'An account with this e-mail address was just created; try again.');
        throw error;
      }
    },
  };
}

export type MemberService = ReturnType<typeof createMemberService>;

function alreadyAccepted(): AppError {
  return new AppError('conflict', 'This invitation was already accepted.');
}
