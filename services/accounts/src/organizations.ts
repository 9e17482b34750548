import { AppError } from '@sigil/kit/errors';
import { enqueueEvent } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import type { Db, Tx } from './db.ts';
import type { Membership, Organization, User } from './generated/prisma/client.ts';
import type { components } from '@sigil/proto/api/sigil';
import type { PasswordHasher } from './passwords.ts';
import {
  isUniqueViolation,
  requireEmail,
  toMemberView,
  toOrganizationView,
  toUserView,
  type MemberView,
  type OrganizationView,
  type UserView,
} from './views.ts';

export interface NewOrganization {
  organizationName: string;
  name: string;
  /** Already normalized. */
  email: string;
  passwordHash: string;
}

export interface CreatedOrganization {
  organization: Organization;
  user: User;
  membership: Membership;
}

/**
 * An organization with its first owner, inside the caller's transaction; emits `organization.created` and
 * `member.added`. Sign-up and the `create-owner` command both come through here.
 */
export async function createOrganizationWithOwner(tx: Tx, input: NewOrganization): Promise<CreatedOrganization> {
  const organization = await tx.organization.create({ data: { id: newId('org'), name: input.organizationName.trim() } });
  const user = await tx.user.create({
    data: { id: newId('usr'), email: input.email, name: input.name.trim(), passwordHash: input.passwordHash },
  });
  const membership = await tx.membership.create({
    data: { id: newId('mem'), organizationId: organization.id, userId: user.id, role: 'owner' },
  });
  await enqueueEvent(tx, {
    type: 'organization.created',
    organizationId: organization.id,
    data: { name: organization.name, ownerUserId: user.id, ownerEmail: user.email },
  });
  await enqueueEvent(tx, {
    type: 'member.added',
    organizationId: organization.id,
    data: { memberId: membership.id, userId: user.id, email: user.email, role: 'owner' },
  });
  return { organization, user, membership };
}

/** Serialises membership changes of one organization (last-owner rule, one pending invitation per e-mail). */
export async function lockOrganization(tx: Tx, organizationId: string): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(`SELECT id FROM organizations WHERE id = $1 FOR UPDATE`, organizationId);
  return rows.length === 1;
}

export function createOrganizationService({ db, passwords }: { db: Db; passwords: PasswordHasher }) {
  return {
    /** For the `create-owner` command: like sign-up, without a session. */
    async createWithOwner(input: components['schemas']['SignUp']): Promise<CreatedOrganization> {
      const email = requireEmail(input.email);
      const passwordHash = await passwords.hash(input.password);
      try {
        return await db.$transaction((tx) => createOrganizationWithOwner(tx, { ...input, email, passwordHash }));
      } catch (error) {
        if (isUniqueViolation(error)) throw new AppError('conflict', `An account with the e-mail address ${email} already exists.`);
        throw error;
      }
    },

    async get(organizationId: string): Promise<OrganizationView | null> {
      const organization = await db.organization.findUnique({ where: { id: organizationId } });
      return organization ? toOrganizationView(organization) : null;
    },

    /** Every member, oldest first (the GraphQL `Organization.members` field; organizations are small). */
    async members(organizationId: string, max = 1000): Promise<MemberView[]> {
      const rows = await db.membership.findMany({
        where: { organizationId },
        include: { user: true },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        take: max,
      });
      return rows.map(toMemberView);
    },

    /** A user, only if they belong to `organizationId`. */
    async member(organizationId: string, userId: string): Promise<UserView | null> {
      const membership = await db.membership.findUnique({
        where: { organizationId_userId: { organizationId, userId } },
        include: { user: true },
      });
      return membership ? toUserView(membership.user) : null;
    },
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
