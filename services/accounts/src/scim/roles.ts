/**
 * Groups give roles: a SCIM group whose display name names a role gives its members that role. The name is compared
 * without case, spaces and underscores count as hyphens, and an optional `sigil-` prefix is allowed, so `Admin`,
 * `admins`, `Sigil Admins` and `sigil_viewer` all name a role. `owner` is never given or taken by the identity
 * provider (the break-glass role stays with the organization). A member in several role groups gets the highest role;
 * in none, `member`.
 */
import { ROLES, type Role } from '@sigil/kit/auth';

/** The roles a group can give, highest first (ROLES is ordered from the most to the least powerful). */
export const GROUP_ROLES: readonly Role[] = ROLES.filter((role) => role !== 'owner');

export const DEFAULT_SCIM_ROLE: Role = 'member';

/** The role a group's display name gives, if any. */
export function roleOfGroup(displayName: string): Role | undefined {
  const key = displayName.trim().toLowerCase().replace(/[\s_]+/g, '-').replace(/^sigil-/, '');
  return GROUP_ROLES.find((role) => key === role || key === `${role}s`);
}

/** The role of a member of these groups: the highest a group gives, else `member`. */
export function roleFromGroups(displayNames: readonly string[]): Role {
  const given = new Set(displayNames.map(roleOfGroup).filter((role): role is Role => role !== undefined));
  return GROUP_ROLES.find((role) => given.has(role)) ?? DEFAULT_SCIM_ROLE;
}
