import type { components } from '@sigil/proto/api/sigil';

export type Role = components['schemas']['Role'];

/** Each role and what it may do, in the words the pages show (packages/kit's ROLE_PERMISSIONS is the rule). */
export const ROLE_WORDS: Record<Role, { name: string; can: string }> = {
  owner: { name: 'Owner', can: 'everything, billing included' },
  admin: { name: 'Admin', can: 'everything but billing' },
  member: { name: 'Member', can: 'templates and envelopes' },
  viewer: { name: 'Viewer', can: 'reads templates and envelopes' },
};

export const ROLES = Object.keys(ROLE_WORDS) as Role[];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && value in ROLE_WORDS;
}
