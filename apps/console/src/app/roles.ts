import type { components } from '@sigil/proto/api/strata';

export type Principal = components['schemas']['Principal'];
export type Role = 'viewer' | 'operator' | 'restorer' | 'restorer-admin';

/** Lowest first (spec part 5): each role may do what the ones before it may. */
export const ROLES: readonly Role[] = ['viewer', 'operator', 'restorer', 'restorer-admin'];

/** What each role adds, in the words the sign-in's role picker and the refusals use. */
export const ROLE_ABILITIES: Record<Role, string> = {
  viewer: 'sees targets, backups, restores, sandboxes and activity',
  operator: 'also suspends and resumes targets, runs backups now, pins backups and reads the audit log',
  restorer: 'also restores into sandboxes and new databases, queries sandboxes and reveals their credentials',
  'restorer-admin': 'also restores in place, applies resources and manages stores, secrets and garbage collection',
};

/** Whether `role` reaches `needed`. */
export function roleAtLeast(role: string | undefined, needed: Role): boolean {
  const have = ROLES.indexOf(role as Role);
  return have >= 0 && have >= ROLES.indexOf(needed);
}
