/**
 * Members that an identity provider brings in (SCIM provisioning, SSO just-in-time provisioning): the Sigil account of
 * an e-mail address, created without a password when there is none yet, and its membership of the organization.
 */
import { enqueueEvent } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import type { Role } from '@sigil/kit/auth';
import type { Tx } from './db.ts';
import type { Membership, User } from './generated/prisma/client.ts';

/**
 * The `password_hash` of an account created by an identity provider. It is not a PHC string, so the password check
 * (passwords.ts `verify`) treats it like an unknown account: the same argon2 work against a dummy hash, then false. No
 * password ever matches it; the person signs in through their organization's SSO.
 */
export const NO_PASSWORD = '!identity-provider';

/** Whether the account has a password: a PHC string (`$argon2id$...`); any marker of an IdP-made account does not. */
export function hasPassword(user: Pick<User, 'passwordHash'>): boolean {
  return user.passwordHash.startsWith('$');
}

export interface ProvisionedMember {
  user: User;
  membership: Membership;
  /** Whether the Sigil account was created now (false: an account of that e-mail existed). */
  createdUser: boolean;
  /** Whether the membership was created now (false: they were a member already). */
  createdMembership: boolean;
}

/**
 * The account of `email` (created password-less when there is none) and its membership of the organization with
 * `role` (an existing membership keeps its role). Emits `member.added` for a new membership. Run it in the caller's
 * transaction, after `lockOrganization`. `email` must already be normalized (views.ts `requireEmail`).
 */
export async function provisionMember(tx: Tx, input: { organizationId: string; email: string; name: string; role: Role }): Promise<ProvisionedMember> {
  const existing = await tx.user.findUnique({ where: { email: input.email } });
  const user =
    existing ?? (await tx.user.create({ data: { id: newId('usr'), email: input.email, name: input.name.trim() || input.email, passwordHash: NO_PASSWORD } }));
  const member = await tx.membership.findUnique({ where: { organizationId_userId: { organizationId: input.organizationId, userId: user.id } } });
  if (member) return { user, membership: member, createdUser: !existing, createdMembership: false };
  const membership = await tx.membership.create({
    data: { id: newId('mem'), organizationId: input.organizationId, userId: user.id, role: input.role },
  });
  await enqueueEvent(tx, {
    type: 'member.added',
    organizationId: input.organizationId,
    data: { memberId: membership.id, userId: user.id, email: user.email, role: input.role },
  });
  return { user, membership, createdUser: !existing, createdMembership: true };
}

/**
 * Whether an identity provider may bring this existing account into the organization. Domains are not verified, so an
 * organization claiming someone else's domain could otherwise pull that person's account into it (and sign in as
 * them through its own IdP). Only an account already a member of the organization (invited, or provisioned before),
 * or one an IdP made (no password, so it could not accept an invitation) that belongs to no organization any more.
 */
export async function mayLinkAccount(tx: Tx, user: Pick<User, 'id' | 'passwordHash'>, organizationId: string): Promise<boolean> {
  const memberships = await tx.membership.findMany({ where: { userId: user.id }, select: { organizationId: true } });
  if (memberships.some((m) => m.organizationId === organizationId)) return true;
  return !hasPassword(user) && memberships.length === 0;
}

