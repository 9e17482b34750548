/** Permissions of part 5 of the spec plus the administration permissions. */
export const PERMISSIONS = [
  'template:read',
  'template:write',
  'template:publish',
  'envelope:read',
  'envelope:send',
  'envelope:void',
  'org:manage',
  'member:manage',
  'sso:manage',
  'apikey:manage',
  'billing:manage',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Permissions a new API key never gets by default (spec part 5, rule 5). */
export const ADMIN_PERMISSIONS = [
  'org:manage',
  'member:manage',
  'sso:manage',
  'apikey:manage',
  'billing:manage',
] as const satisfies readonly Permission[];

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/**
 * The owner rule of membership changes, beyond `member:manage`: only an owner invites an owner, grants or takes away
 * the owner role, or removes an owner (themselves included). Accounts enforces it (403); the dashboard offers only
 * what it allows. The last owner's staying an owner is accounts' own check (409), on the organization's current state.
 */
export function mayActOnRole(actorRole: Role | undefined, role: Role): boolean {
  return role !== 'owner' || actorRole === 'owner';
}

export const MODES = ['test', 'live'] as const;
export type Mode = (typeof MODES)[number];

/**
 * Auth column of the spec: K = API key or dashboard session, D = dashboard
 * session only, S = signer token, V = viewer token, P = public.
 */
export const AUTH_KINDS = ['K', 'D', 'S', 'V', 'P'] as const;
export type AuthKind = (typeof AUTH_KINDS)[number];

export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

/** The `security` value every operation of a given auth kind declares. */
export const SECURITY_BY_AUTH: Readonly<Record<AuthKind, readonly SecurityRequirement[]>> = {
  K: [{ bearerApiKey: [] }, { apiKey: [] }, { sessionCookie: [] }],
  D: [{ sessionCookie: [] }],
  S: [{ signerToken: [] }],
  V: [{ viewerToken: [] }],
  P: [],
};

export function isPermission(value: unknown): value is Permission {
  return typeof value === 'string' && (PERMISSIONS as readonly string[]).includes(value);
}

export function isAuthKind(value: unknown): value is AuthKind {
  return typeof value === 'string' && (AUTH_KINDS as readonly string[]).includes(value);
}
