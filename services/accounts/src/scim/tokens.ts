/**
 * The organization's SCIM bearer token: `sglscim_` + 43 random base62 characters, shown once, stored as its SHA-256.
 * One token per organization: creating one replaces (and so revokes) the previous one; revoking deletes it, and the
 * next SCIM request with it is 401.
 */
import type { Principal } from '@sigil/kit/auth';
import { featureNotOnPlan, type EntitlementsCache } from '@sigil/kit/entitlements';
import { randomBase62 } from '@sigil/kit/ids';
import type { components } from '@sigil/proto/api/sigil';
import type { Db } from '../db.ts';
import { recordSsoAudit } from '../sso/audit.ts';
import { sha256Hex } from '../tokens.ts';
import { listProvisionedUsers, type ProvisionedUserView } from './users.ts';

export const SCIM_TOKEN_PREFIX = 'sglscim_';
const TOKEN_RANDOM_LENGTH = 43;
/** `last_used_at` is written at most this often. */
const LAST_USED_RESOLUTION = '1 minute';
/** `GET /v1/scim` lists the most recently provisioned or changed users, this many at most. */
export const SCIM_STATE_USERS = 100;

export type ScimState = components['schemas']['ScimState'] & {
  token: { active: boolean; createdAt: string | null; lastUsedAt: string | null };
  users: ProvisionedUserView[];
};

export interface ScimTokenServiceDeps {
  db: Db;
  clock: () => Date;
  entitlements: EntitlementsCache;
  /** The gateway's public origin; the SCIM endpoint is `<publicUrl>/scim/v2`. */
  publicUrl: string;
}

export function scimEndpoint(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/scim/v2`;
}

export function createScimTokenService({ db, clock, entitlements, publicUrl }: ScimTokenServiceDeps) {
  const actorOf = (principal: Principal) => ({ type: 'member' as const, id: principal.userId ?? principal.actorId });

  return {
    /** Creates or replaces the token (403 `plan-upgrade-required` without the plan's `scim`). */
    async create(principal: Principal, ip: string): Promise<components['schemas']['ScimToken']> {
      const organizationId = principal.organizationId;
      const plan = await entitlements.get(organizationId);
      if (!plan.features.scim) throw featureNotOnPlan(plan, 'scim');
      const token = SCIM_TOKEN_PREFIX + randomBase62(TOKEN_RANDOM_LENGTH);
      const now = clock();
      await db.$transaction(async (tx) => {
        const previous = await tx.scimToken.findUnique({ where: { organizationId }, select: { createdAt: true } });
        const data = { tokenHash: sha256Hex(token), createdBy: principal.userId ?? principal.actorId, createdAt: now, lastUsedAt: null };
        await tx.scimToken.upsert({ where: { organizationId }, create: { organizationId, ...data }, update: data });
        await recordSsoAudit(tx, {
          organizationId,
          action: 'scim.token_created',
          actor: actorOf(principal),
          details: { replaced: previous !== null, ...(previous ? { previousCreatedAt: previous.createdAt.toISOString() } : {}) },
          ip,
          at: now,
        });
      });
      return { object: 'scim_token', token, createdAt: now.toISOString() };
    },

    /** Revokes the token: provisioning stops at once. Revoking when there is none changes nothing. */
    async revoke(principal: Principal, ip: string): Promise<void> {
      const organizationId = principal.organizationId;
      await db.$transaction(async (tx) => {
        const { count } = await tx.scimToken.deleteMany({ where: { organizationId } });
        if (count === 0) return;
        await recordSsoAudit(tx, { organizationId, action: 'scim.token_revoked', actor: actorOf(principal), ip, at: clock() });
      });
    },

    /** The endpoint, the token's state and the provisioned users (the newest SCIM_STATE_USERS by last change). */
    async state(organizationId: string): Promise<ScimState> {
      const token = await db.scimToken.findUnique({ where: { organizationId } });
      const createdAt = token ? token.createdAt.toISOString() : null;
      return {
        object: 'scim',
        endpoint: scimEndpoint(publicUrl),
        tokenActive: token !== null,
        tokenCreatedAt: createdAt,
        token: { active: token !== null, createdAt, lastUsedAt: token?.lastUsedAt ? token.lastUsedAt.toISOString() : null },
        users: await listProvisionedUsers(db, organizationId, SCIM_STATE_USERS),
      };
    },

    /** The organization a bearer token provisions for, or undefined (unknown or revoked). Notes when it was used. */
    async authenticate(bearer: string): Promise<string | undefined> {
      if (!bearer.startsWith(SCIM_TOKEN_PREFIX)) return undefined;
      const row = await db.scimToken.findUnique({ where: { tokenHash: sha256Hex(bearer) }, select: { organizationId: true } });
      if (!row) return undefined;
      await db.$executeRawUnsafe(
        `UPDATE scim_tokens SET last_used_at = $2
         WHERE organization_id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '${LAST_USED_RESOLUTION}')`,
        row.organizationId,
        clock(),
      );
      return row.organizationId;
    },
  };
}

export type ScimTokenService = ReturnType<typeof createScimTokenService>;
