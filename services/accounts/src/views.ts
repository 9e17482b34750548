import { AppError } from '@sigil/kit/errors';
import { ROLE_PERMISSIONS, ROLES, type Permission, type Role } from '@sigil/kit/auth';
import type { components } from '@sigil/proto/api/sigil';
import type { ApiKey, Invitation, Membership, Organization, User } from './generated/prisma/client.ts';

/** The API's shapes (generated from components/schemas of proto/openapi/sigil.v1.yaml) and the row -> shape mappers. */

export type UserView = components['schemas']['User'];
export type OrganizationView = components['schemas']['Organization'];
export type MemberView = components['schemas']['Member'];
export type SessionView = components['schemas']['Session'];
export type InvitationView = components['schemas']['Invitation'];
export type ApiKeyView = components['schemas']['ApiKey'];

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

export function toUserView(user: Pick<User, 'id' | 'email' | 'name' | 'createdAt'>): UserView {
  return { id: user.id, object: 'user', email: user.email, name: user.name, createdAt: user.createdAt.toISOString() };
}

export function toOrganizationView(organization: Organization): OrganizationView {
  return { id: organization.id, object: 'organization', name: organization.name, createdAt: organization.createdAt.toISOString() };
}

export function toMemberView(membership: Membership & { user: User }): MemberView {
  const role = asRole(membership.role);
  return {
    id: membership.id,
    object: 'member',
    user: toUserView(membership.user),
    role,
    permissions: ROLE_PERMISSIONS[role].slice(),
    createdAt: membership.createdAt.toISOString(),
  };
}

export function toInvitationView(invitation: Invitation): InvitationView {
  return {
    id: invitation.id,
    object: 'invitation',
    email: invitation.email,
    role: asRole(invitation.role),
    expiresAt: invitation.expiresAt.toISOString(),
    createdAt: invitation.createdAt.toISOString(),
    acceptedAt: iso(invitation.acceptedAt),
  };
}

export function toApiKeyView(key: ApiKey): ApiKeyView {
  return {
    id: key.id,
    object: 'api_key',
    name: key.name,
    mode: key.mode === 'live' ? 'live' : 'test',
    scopes: key.scopes as Permission[],
    prefix: key.prefix,
    createdAt: key.createdAt.toISOString(),
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
    revokedAt: iso(key.revokedAt),
    createdBy: key.createdBy,
  };
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Roles are stored as text; anything else in the table is a bug, not a caller error. */
export function asRole(value: string): Role {
  if (!isRole(value)) throw new Error(`Unknown role stored: ${value}`);
  return value;
}

/** E-mail addresses are stored trimmed and lower-cased, so look-ups and the unique index ignore case. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The contract says `format: email`, which the validator does not enforce; this does, with the API's pointer. */
export function requireEmail(email: string, pointer = '/body/email'): string {
  const normalized = normalizeEmail(email);
  if (!EMAIL.test(normalized) || normalized.length > 254) {
    throw new AppError('validation-failed', 'Field email must be a valid e-mail address.', {
      errors: [{ pointer, detail: 'must be a valid e-mail address' }],
    });
  }
  return normalized;
}

/** Prisma's unique-constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === 'P2002';
}

/** A `[createdAt, id]` cursor, checked so a forged one is a 400, never a database error. */
