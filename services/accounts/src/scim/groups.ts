/**
 * SCIM Groups of one organization: kept with their members (SCIM users of the organization). A group named after a
 * role (roles.ts) gives its members that role: when such a group or its members change, the members concerned get
 * the role their groups give now. Members that are not users of this organization are left out.
 */
import { newId } from '@sigil/kit/ids';
import type { Prisma, ScimGroup } from '../generated/prisma/client.ts';
import type { Tx } from '../db.ts';
import { lockOrganization } from '../organizations.ts';
import { recordSsoAudit, type SsoAuditAction } from '../sso/audit.ts';
import { isUniqueViolation } from '../views.ts';
import { scimError } from './errors.ts';
import { roleOfGroup } from './roles.ts';
import { applyGroupRoles, type ScimContext } from './users.ts';

export type GroupResource = Record<string, unknown> & { displayName?: string; externalId?: string; members?: { value?: unknown }[] };

type GroupRow = ScimGroup & { members: { scimUser: { id: string; displayName: string } }[] };

const withMembers = { members: { include: { scimUser: { select: { id: true, displayName: true } } } } } as const;

export function toGroupResource(row: GroupRow): GroupResource {
  return {
    id: row.id,
    displayName: row.displayName,
    ...(row.externalId ? { externalId: row.externalId } : {}),
    members: row.members.map(({ scimUser }) => ({ value: scimUser.id, display: scimUser.displayName, type: 'User' })),
    meta: { resourceType: 'Group', created: row.createdAt.toISOString(), lastModified: row.updatedAt.toISOString() },
  };
}

function requireDisplayName(resource: GroupResource): string {
  const displayName = typeof resource.displayName === 'string' ? resource.displayName.trim() : '';
  if (!displayName) throw scimError(400, 'invalidValue', 'displayName is required.');
  return displayName;
}

/** The distinct member ids a resource names that are SCIM users of this organization. */
async function knownMembers(tx: Tx, organizationId: string, resource: GroupResource): Promise<string[]> {
  const named = [...new Set((resource.members ?? []).map((m) => m.value).filter((v): v is string => typeof v === 'string'))];
  if (named.length === 0) return [];
  const rows = await tx.scimUser.findMany({ where: { organizationId, id: { in: named } }, select: { id: true } });
  return rows.map((r) => r.id);
}

async function findGroup(tx: Tx, organizationId: string, id: string): Promise<GroupRow> {
  const row = await tx.scimGroup.findFirst({ where: { id, organizationId }, include: withMembers });
  if (!row) throw scimError(404, null, `Group ${id} not found.`);
  return row;
}

async function audit(tx: Tx, ctx: ScimContext, action: SsoAuditAction, row: Pick<ScimGroup, 'id' | 'displayName'>, details: Record<string, unknown>) {
  await recordSsoAudit(tx, {
    organizationId: ctx.organizationId,
    action,
    actor: { type: 'scim' },
    subject: row.displayName,
    details: { scimGroupId: row.id, displayName: row.displayName, role: roleOfGroup(row.displayName) ?? null, ...details },
    ip: ctx.ip,
    at: ctx.clock(),
  });
}

async function inTransaction<T>(ctx: ScimContext, displayName: string, work: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await ctx.db.$transaction(async (tx) => {
      await lockOrganization(tx, ctx.organizationId);
      return work(tx);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw scimError(409, 'uniqueness', `A group named ${displayName} already exists.`);
    throw error;
  }
}

/** POST /Groups. */
export async function createScimGroup(ctx: ScimContext, resource: GroupResource): Promise<GroupResource> {
  const displayName = requireDisplayName(resource);
  return inTransaction(ctx, displayName, async (tx) => {
    const members = await knownMembers(tx, ctx.organizationId, resource);
    const group = await tx.scimGroup.create({
      data: {
        id: newId('scimg'),
        organizationId: ctx.organizationId,
        displayName,
        externalId: typeof resource.externalId === 'string' ? resource.externalId : null,
        members: { create: members.map((scimUserId) => ({ scimUserId })) },
      },
      include: withMembers,
    });
    if (roleOfGroup(displayName)) await applyGroupRoles(tx, ctx.organizationId, members);
    await audit(tx, ctx, 'scim.group_created', group, { members: members.length });
    return toGroupResource(group);
  });
}

/** PUT /Groups/{id}, and PATCH once SCIMMY has applied the operations. */
export async function replaceScimGroup(ctx: ScimContext, id: string, resource: GroupResource): Promise<GroupResource> {
  const displayName = requireDisplayName(resource);
  return inTransaction(ctx, displayName, async (tx) => {
    const before = await findGroup(tx, ctx.organizationId, id);
    const previous = before.members.map((m) => m.scimUser.id);
    const members = await knownMembers(tx, ctx.organizationId, resource);
    const added = members.filter((m) => !previous.includes(m));
    const removed = previous.filter((m) => !members.includes(m));
    await tx.scimGroupMember.deleteMany({ where: { groupId: id, scimUserId: { in: removed } } });
    if (added.length) await tx.scimGroupMember.createMany({ data: added.map((scimUserId) => ({ groupId: id, scimUserId })) });
    const group = await tx.scimGroup.update({
      where: { id },
      data: { displayName, externalId: typeof resource.externalId === 'string' ? resource.externalId : null, updatedAt: ctx.clock() },
      include: withMembers,
    });
    const roleChanged = roleOfGroup(before.displayName) !== roleOfGroup(displayName);
    const concerned = roleChanged ? [...new Set([...previous, ...members])] : roleOfGroup(displayName) ? [...added, ...removed] : [];
    await applyGroupRoles(tx, ctx.organizationId, concerned);
    await audit(tx, ctx, 'scim.group_updated', group, { added, removed, ...(before.displayName !== displayName ? { previousDisplayName: before.displayName } : {}) });
    return toGroupResource(group);
  });
}

/** DELETE /Groups/{id}: its members lose the role it gave. */
export async function deleteScimGroup(ctx: ScimContext, id: string): Promise<void> {
  await inTransaction(ctx, id, async (tx) => {
    const group = await findGroup(tx, ctx.organizationId, id);
    await tx.scimGroup.delete({ where: { id } });
    const members = group.members.map((m) => m.scimUser.id);
    if (roleOfGroup(group.displayName)) await applyGroupRoles(tx, ctx.organizationId, members);
    await audit(tx, ctx, 'scim.group_deleted', group, { members: members.length });
  });
}

export async function getScimGroup(ctx: ScimContext, id: string): Promise<GroupResource> {
  return toGroupResource(await findGroup(ctx.db, ctx.organizationId, id));
}

export async function findScimGroups(ctx: ScimContext, where: Prisma.ScimGroupWhereInput, page: { skip: number; take: number }): Promise<{ total: number; resources: GroupResource[] }> {
  const filter = { ...where, organizationId: ctx.organizationId };
  const [total, rows] = await Promise.all([
    ctx.db.scimGroup.count({ where: filter }),
    ctx.db.scimGroup.findMany({ where: filter, include: withMembers, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], skip: page.skip, take: page.take }),
  ]);
  return { total, resources: rows.map(toGroupResource) };
}
