/**
 * SCIM Users of one organization and what they do to Sigil: an active user is a member (their account created
 * password-less when their e-mail has none, provisioning.ts); deactivating or deleting one removes the membership
 * and ends their sessions (members.ts `deleteMembership`, the same path as removing a member in the dashboard).
 * The e-mail a user was first provisioned with names their Sigil account for good (a later change is kept in the
 * SCIM resource only): an identity provider never moves another organization's member to a different account.
 */
import type { Role } from '@sigil/kit/auth';
import { newId } from '@sigil/kit/ids';
import type { Prisma, ScimUser } from '../generated/prisma/client.ts';
import type { Db, Tx } from '../db.ts';
import { changeMembershipRole, deleteMembership, LastOwnerError } from '../members.ts';
import { lockOrganization } from '../organizations.ts';
import { hasPassword, mayLinkAccount, NO_PASSWORD, provisionMember } from '../provisioning.ts';
import { recordSsoAudit, type SsoAuditAction } from '../sso/audit.ts';
import { asRole, isUniqueViolation, normalizeEmail } from '../views.ts';
import { scimError } from './errors.ts';
import { roleFromGroups, roleOfGroup } from './roles.ts';

/** What a SCIM request runs with: the organization of its token. */
export interface ScimContext {
  db: Db;
  clock: () => Date;
  organizationId: string;
  ip: string;
}

/** A SCIM User resource as SCIMMY hands it over and takes it back (plain JSON). */
export type UserResource = Record<string, unknown> & { userName?: string; active?: boolean; externalId?: string };

export type ScimUserRow = ScimUser & { groups: { group: { id: string; displayName: string } }[] };

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const withGroups = { groups: { include: { group: { select: { id: true, displayName: true } } } } } as const;

/** The SCIM representation: what the IdP wrote, with our id, state, groups and timestamps. */
export function toUserResource(row: ScimUserRow): UserResource {
  const stored = row.resource as Record<string, unknown>;
  return {
    ...stored,
    id: row.id,
    userName: row.userName,
    ...(row.externalId ? { externalId: row.externalId } : {}),
    active: row.active,
    groups: row.groups.map(({ group }) => ({ value: group.id, display: group.displayName, type: 'direct' })),
    meta: { resourceType: 'User', created: row.createdAt.toISOString(), lastModified: row.updatedAt.toISOString() },
  };
}

/** The e-mail of a SCIM user: the primary address, else the work one, else the first, else a userName that is one. */
function emailOf(resource: UserResource): string {
  const emails = Array.isArray(resource.emails) ? (resource.emails as { value?: unknown; primary?: unknown; type?: unknown }[]) : [];
  const chosen = emails.find((e) => e.primary === true) ?? emails.find((e) => e.type === 'work') ?? emails[0];
  const candidate = typeof chosen?.value === 'string' ? chosen.value : resource.userName;
  const email = normalizeEmail(String(candidate ?? ''));
  if (!EMAIL.test(email) || email.length > 254) {
    throw scimError(400, 'invalidValue', 'The user needs an e-mail address (emails[].value, or a userName that is an e-mail address).');
  }
  return email;
}

function displayNameOf(resource: UserResource, email: string): string {
  const name = (resource.name ?? {}) as { formatted?: unknown; givenName?: unknown; familyName?: unknown };
  const joined = [name.givenName, name.familyName].filter((part) => typeof part === 'string' && part.trim() !== '').join(' ');
  const candidates = [name.formatted, joined, resource.displayName, email];
  return String(candidates.find((c) => typeof c === 'string' && c.trim() !== '')).trim().slice(0, 200);
}

/** What we keep of an incoming resource: never our read-only attributes, never a password. */
function storable(resource: UserResource): Prisma.InputJsonValue {
  const { id: _id, meta: _meta, groups: _groups, password: _password, ...rest } = resource;
  return JSON.parse(JSON.stringify(rest)) as Prisma.InputJsonValue;
}

function requireUserName(resource: UserResource): string {
  const userName = typeof resource.userName === 'string' ? resource.userName.trim() : '';
  if (!userName) throw scimError(400, 'invalidValue', 'userName is required.');
  return userName;
}

async function findUser(tx: Tx, organizationId: string, id: string): Promise<ScimUserRow> {
  const row = await tx.scimUser.findFirst({ where: { id, organizationId }, include: withGroups });
  if (!row) throw scimError(404, null, `User ${id} not found.`);
  return row;
}

async function audit(tx: Pick<Tx, 'ssoAuditEvent'>, ctx: ScimContext, action: SsoAuditAction, row: Pick<ScimUser, 'id' | 'email' | 'userName'>, extra: { outcome?: 'failure'; reason?: string; details?: Record<string, unknown> } = {}) {
  await recordSsoAudit(tx, {
    organizationId: ctx.organizationId,
    action,
    actor: { type: 'scim' },
    subject: row.email,
    outcome: extra.outcome,
    reason: extra.reason,
    details: { scimUserId: row.id, userName: row.userName, ...extra.details },
    ip: ctx.ip,
    at: ctx.clock(),
  });
}

/** The role a provisioned user's groups give them. */
export function groupRoleOf(row: ScimUserRow): Role {
  return roleFromGroups(row.groups.map(({ group }) => group.displayName));
}

/** Adds the membership of an active user (an existing one keeps its role unless their groups name one). */
async function activate(tx: Tx, ctx: ScimContext, row: ScimUserRow): Promise<void> {
  const role = groupRoleOf(row);
  const { email } = await tx.user.findUniqueOrThrow({ where: { id: row.userId }, select: { email: true } });
  const { membership, createdMembership } = await provisionMember(tx, { organizationId: ctx.organizationId, email, name: row.displayName, role });
  const namesRole = row.groups.some(({ group }) => roleOfGroup(group.displayName));
  if (!createdMembership && namesRole && membership.role !== 'owner' && asRole(membership.role) !== role) await changeMembershipRole(tx, membership, role);
}

/** Removes the membership of a user being deactivated or deleted. The last owner stays: 400 `mutability`, audited. */
async function deactivate(tx: Tx, ctx: ScimContext, row: ScimUserRow, action: SsoAuditAction): Promise<void> {
  const membership = await tx.membership.findUnique({ where: { organizationId_userId: { organizationId: ctx.organizationId, userId: row.userId } } });
  if (!membership) return;
  try {
    await deleteMembership(tx, membership, ctx.clock());
  } catch (error) {
    if (!(error instanceof LastOwnerError)) throw error;
    const reason = `${row.email} is the organization's last owner and stays a member; make another member an owner first.`;
    // The transaction of the change rolls back: the refusal is recorded on its own.
    await audit(ctx.db, ctx, action, row, { outcome: 'failure', reason });
    throw scimError(400, 'mutability', reason);
  }
}

function uniqueUserName(userName: string) {
  return scimError(409, 'uniqueness', `A user with userName ${userName} already exists.`);
}

/** Runs a change under the organization's lock; a unique violation is SCIM's 409 `uniqueness`. */
async function inTransaction<T>(ctx: ScimContext, userName: string, work: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await ctx.db.$transaction(async (tx) => {
      await lockOrganization(tx, ctx.organizationId);
      return work(tx);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw uniqueUserName(userName);
    throw error;
  }
}

/** POST /Users. */
export async function createScimUser(ctx: ScimContext, resource: UserResource): Promise<UserResource> {
  const userName = requireUserName(resource);
  const email = emailOf(resource);
  const active = resource.active !== false;
  return inTransaction(ctx, userName, async (tx) => {
    const { organizationId } = ctx;
    if (await tx.scimUser.findUnique({ where: { organizationId_userNameKey: { organizationId, userNameKey: userName.toLowerCase() } } })) throw uniqueUserName(userName);
    const displayName = displayNameOf(resource, email);
    const existing = await tx.user.findUnique({ where: { email }, select: { id: true, passwordHash: true } });
    if (existing && (await tx.scimUser.findUnique({ where: { organizationId_userId: { organizationId, userId: existing.id } } }))) {
      throw scimError(409, 'uniqueness', `${email} is already provisioned under another userName.`);
    }
    if (existing && !(await mayLinkAccount(tx, existing, organizationId))) {
      throw scimError(409, 'uniqueness', `${email} already has a Sigil account that is not a member of this organization: invite them from the dashboard, then provisioning manages their membership.`);
    }
    const userId = existing?.id ?? (await provisionAccountOnly(tx, email, displayName)).id;
    const row = await tx.scimUser.create({
      data: {
        id: newId('scimu'),
        organizationId,
        userId,
        userName,
        userNameKey: userName.toLowerCase(),
        externalId: typeof resource.externalId === 'string' ? resource.externalId : null,
        email,
        displayName,
        active,
        resource: storable(resource),
      },
      include: withGroups,
    });
    if (active) await activate(tx, ctx, row);
    else await deactivate(tx, ctx, row, 'scim.user_created');
    await audit(tx, ctx, 'scim.user_created', row, { details: { active } });
    return toUserResource(row);
  });
}

/** An inactive user still names an account: the password-less account of their e-mail, without a membership. */
async function provisionAccountOnly(tx: Tx, email: string, name: string): Promise<{ id: string }> {
  return tx.user.create({ data: { id: newId('usr'), email, name, passwordHash: NO_PASSWORD }, select: { id: true } });
}

/** PUT /Users/{id}, and PATCH once SCIMMY has applied the operations: the resource as a whole. */
export async function replaceScimUser(ctx: ScimContext, id: string, resource: UserResource): Promise<UserResource> {
  const userName = requireUserName(resource);
  return inTransaction(ctx, userName, async (tx) => {
    const before = await findUser(tx, ctx.organizationId, id);
    const active = resource.active !== false;
    const email = safeEmail(resource, before.email);
    const displayName = displayNameOf(resource, before.email);
    const row = await tx.scimUser.update({
      where: { id },
      data: {
        userName,
        userNameKey: userName.toLowerCase(),
        externalId: typeof resource.externalId === 'string' ? resource.externalId : null,
        email: before.email,
        displayName,
        active,
        resource: storable(resource),
      },
      include: withGroups,
    });
    const user = await tx.user.findUniqueOrThrow({ where: { id: row.userId } });
    // Only an account the identity provider created follows its name; a person's own account keeps theirs.
    if (!hasPassword(user) && user.name !== displayName) await tx.user.update({ where: { id: user.id }, data: { name: displayName } });
    const details = { ...(email !== before.email ? { emailIgnored: email } : {}) };
    if (before.active && !active) {
      await deactivate(tx, ctx, row, 'scim.user_deactivated');
      await audit(tx, ctx, 'scim.user_deactivated', row, { details });
    } else {
      if (!before.active && active) await activate(tx, ctx, row);
      await audit(tx, ctx, 'scim.user_updated', row, { details: { ...details, ...(!before.active && active ? { reactivated: true } : {}) } });
    }
    return toUserResource(row);
  });
}

/** The e-mail a changed resource names, or the one we have when it names none we can use. */
function safeEmail(resource: UserResource, current: string): string {
  try {
    return emailOf(resource);
  } catch {
    return current;
  }
}

/** DELETE /Users/{id}: the membership goes, then the SCIM user (the Sigil account stays: it may belong elsewhere). */
export async function deleteScimUser(ctx: ScimContext, id: string): Promise<void> {
  await inTransaction(ctx, id, async (tx) => {
    const row = await findUser(tx, ctx.organizationId, id);
    if (row.active) await deactivate(tx, ctx, row, 'scim.user_deleted');
    const affectedGroups = row.groups.map(({ group }) => group.id);
    await tx.scimUser.delete({ where: { id } });
    await audit(tx, ctx, 'scim.user_deleted', row, { details: { groups: affectedGroups } });
  });
}

export async function getScimUser(ctx: ScimContext, id: string): Promise<UserResource> {
  return toUserResource(await findUser(ctx.db, ctx.organizationId, id));
}

/** A page of the organization's SCIM users matching `where`, oldest first (stable for startIndex paging). */
export async function findScimUsers(ctx: ScimContext, where: Prisma.ScimUserWhereInput, page: { skip: number; take: number }): Promise<{ total: number; resources: UserResource[] }> {
  const filter = { ...where, organizationId: ctx.organizationId };
  const [total, rows] = await Promise.all([
    ctx.db.scimUser.count({ where: filter }),
    ctx.db.scimUser.findMany({ where: filter, include: withGroups, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], skip: page.skip, take: page.take }),
  ]);
  return { total, resources: rows.map(toUserResource) };
}

export type ProvisionedUserView = {
  id: string;
  userName: string;
  email: string;
  name: string;
  active: boolean;
  /** The member's role in Sigil now (null when deactivated). */
  role: Role | null;
  groups: string[];
  lastProvisionedAt: string;
};

/** For `GET /v1/scim`: the most recently changed provisioned users. */
export async function listProvisionedUsers(db: Db, organizationId: string, max: number): Promise<ProvisionedUserView[]> {
  const rows = await db.scimUser.findMany({
    where: { organizationId },
    include: { ...withGroups, user: { select: { memberships: { where: { organizationId }, select: { role: true } } } } },
    orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
    take: max,
  });
  return rows.map((row) => {
    const membership = row.user.memberships[0];
    return {
      id: row.id,
      userName: row.userName,
      email: row.email,
      name: row.displayName,
      active: row.active,
      role: membership ? asRole(membership.role) : null,
      groups: row.groups.map(({ group }) => group.displayName),
      lastProvisionedAt: row.updatedAt.toISOString(),
    };
  });
}

/** After a role group changed: each affected active user gets the role their groups give now (owners keep theirs). */
export async function applyGroupRoles(tx: Tx, organizationId: string, scimUserIds: readonly string[]): Promise<void> {
  if (scimUserIds.length === 0) return;
  const rows = await tx.scimUser.findMany({ where: { organizationId, id: { in: [...scimUserIds] }, active: true }, include: withGroups });
  for (const row of rows) {
    const membership = await tx.membership.findUnique({ where: { organizationId_userId: { organizationId, userId: row.userId } } });
    if (!membership || membership.role === 'owner') continue;
    const role = groupRoleOf(row);
    if (asRole(membership.role) !== role) await changeMembershipRole(tx, membership, role);
  }
}
