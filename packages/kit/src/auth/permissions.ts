import { ADMIN_PERMISSIONS, PERMISSIONS, type Permission, type Role } from '@sigil/proto/auth';

export { PERMISSIONS, ROLES, isPermission, type Permission, type Role } from '@sigil/proto/auth';

const CONTENT: Permission[] = ['template:read', 'template:write', 'template:publish', 'envelope:read', 'envelope:send', 'envelope:void'];

/** What each dashboard role may do. Owners hold everything; admins everything but billing. */
export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS.filter((p) => p !== 'billing:manage'),
  member: CONTENT,
  viewer: ['template:read', 'envelope:read'],
};

/** Permissions an API key never receives by default (spec part 5, rule 5). */
export const ADMIN_ONLY_PERMISSIONS: readonly Permission[] = ADMIN_PERMISSIONS;
