import { mayActOnRole } from '@sigil/proto/auth';
import { ROLES, type Role } from './roles.ts';

/** The signed-in person, as the members page needs them: their role, and whether they hold `member:manage`. */
export interface Manager {
  role: Role | undefined;
  manage: boolean;
}

/** The roles someone may invite as or grant: only an owner gives out `owner`. */
export function grantableRoles(manager: Manager): Role[] {
  return manager.manage ? ROLES.filter((role) => mayActOnRole(manager.role, role)) : [];
}

/**
 * What the API lets the signed-in person do to one member (removeMember and updateMember: `member:manage`, then the
 * owner rule): change their role to one of `roles`, and remove them, which is leaving when it is themself. Members and
 * viewers can do neither, not even leave. Whether the last owner may go is the API's call on the organization as it
 * is then: its refusal is shown beside the control.
 */
export function memberActions(manager: Manager, member: Role, isYou: boolean): { roles: Role[]; removal: 'leave' | 'remove' | undefined } {
  if (!manager.manage || !mayActOnRole(manager.role, member)) return { roles: [], removal: undefined };
  return { roles: grantableRoles(manager), removal: isYou ? 'leave' : 'remove' };
}
