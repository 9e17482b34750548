import { SIGIL } from '@sigil/proto/product';
import { ADMIN_ONLY_PERMISSIONS, PERMISSIONS, type Mode, type Permission, type Principal } from '@sigil/kit/auth';
import { enqueueEvent } from '@sigil/kit/bus';
import { missingPermission, notFound } from '@sigil/kit/errors';
import { newId, randomBase62 } from '@sigil/kit/ids';
import { newestFirst, type ListPage } from '@sigil/kit/pagination';
import type { Db, Tx } from './db.ts';
import type { AuthenticateResponse } from '@sigil/proto/internal-auth';
import type { components } from '@sigil/proto/api/sigil';
import { sha256Hex } from './tokens.ts';
import { toApiKeyView, type ApiKeyView } from './views.ts';

/** Characters of the secret after `sgl_live_` / `sgl_test_` (base62, ≈190 bits). */
export const SECRET_RANDOM_LENGTH = 32;
/** `prefix` is the first 12 characters of the secret, e.g. `sgl_test_Ab3`: enough to recognise a key, useless to use it. */
export const PREFIX_LENGTH = 12;
const DAY_MS = 24 * 60 * 60 * 1000;
/** `last_used_at` is written at most this often per key. */
const LAST_USED_RESOLUTION = '1 minute';

type CreateApiKeyInput = components['schemas']['CreateApiKey'];

export interface ListApiKeysInput {
  limit: number;
  cursor?: string;
  mode?: Mode;
}

export interface ApiKeyCreator {
  organizationId: string;
  userId: string;
  permissions: readonly Permission[];
}

export function newApiKeySecret(mode: Mode): string {
  return (mode === 'live' ? SIGIL.keyPrefixLive : SIGIL.keyPrefixTest) + randomBase62(SECRET_RANDOM_LENGTH);
}

/**
 * The scopes a new key gets: the requested ones, each of which the creator must hold (403 naming the first
 * missing one), or by default the creator's permissions minus the administrative ones (spec part 5, rule 5).
 * Returned in the canonical order of PERMISSIONS.
 */
export function resolveScopes(creatorPermissions: readonly Permission[], requested: readonly Permission[] | undefined): Permission[] {
  const wanted = requested ?? creatorPermissions.filter((p) => !ADMIN_ONLY_PERMISSIONS.includes(p));
  for (const permission of PERMISSIONS) {
    if (wanted.includes(permission) && !creatorPermissions.includes(permission)) throw missingPermission(permission);
  }
  return PERMISSIONS.filter((p) => wanted.includes(p));
}

/** Creates a key inside the caller's transaction; the secret is returned once and stored as its SHA-256. */
export async function insertApiKey(tx: Tx, creator: ApiKeyCreator, input: CreateApiKeyInput, now: Date): Promise<components['schemas']['ApiKeyCreated']> {
  const scopes = resolveScopes(creator.permissions, input.scopes);
  const secret = newApiKeySecret(input.mode);
  const row = await tx.apiKey.create({
    data: {
      id: newId('key'),
      organizationId: creator.organizationId,
      name: input.name,
      mode: input.mode,
      scopes,
      prefix: secret.slice(0, PREFIX_LENGTH),
      secretHash: sha256Hex(secret),
      createdBy: creator.userId,
      expiresAt: input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * DAY_MS) : null,
    },
  });
  await enqueueEvent(tx, {
    type: 'apikey.created',
    organizationId: creator.organizationId,
    data: { apiKeyId: row.id, mode: input.mode, scopes, createdBy: creator.userId },
  });
  return { ...toApiKeyView(row), secret };
}

export function createApiKeyService({ db, clock }: { db: Db; clock: () => Date }) {
  return {
    /** `POST /v1/api-keys`: dashboard sessions only (the operation's `x-auth: D`). */
    async create(principal: Principal, input: CreateApiKeyInput): Promise<components['schemas']['ApiKeyCreated']> {
      const creator = { organizationId: principal.organizationId, userId: principal.userId ?? principal.actorId, permissions: principal.permissions };
      return db.$transaction((tx) => insertApiKey(tx, creator, input, clock()));
    },

    /** Newest first, revoked keys included (with `revokedAt`). */
    async list(organizationId: string, input: ListApiKeysInput): Promise<ListPage<ApiKeyView>> {
      const rows = await db.apiKey.findMany({
        where: {
          organizationId,
          ...(input.mode ? { mode: input.mode } : {}),
          ...newestFirst.after(input.cursor),
        },
        orderBy: newestFirst.orderBy,
        take: input.limit + 1,
      });
      return newestFirst.page(rows, input.limit, toApiKeyView);
    },

    /**
     * Revokes a key of the caller's organization (404 otherwise). Revoking a revoked key changes nothing.
     * `apikey.revoked` carries the secret's hash so the gateway drops the key from its cache at once.
     */
    async revoke(organizationId: string, id: string): Promise<void> {
      await db.$transaction(async (tx) => {
        const key = await tx.apiKey.findFirst({ where: { id, organizationId }, select: { id: true, secretHash: true } });
        if (!key) throw notFound(`API key ${id}`);
        const { count } = await tx.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: clock() } });
        if (count === 1) {
          await enqueueEvent(tx, { type: 'apikey.revoked', organizationId, data: { apiKeyId: id, keyHash: key.secretHash } });
        }
      });
    },

    /** For the gateway: the principal of a key, looked up by the SHA-256 of the full secret. */
    async authenticate(secretHash: string): Promise<AuthenticateResponse> {
      const key = await db.apiKey.findUnique({ where: { secretHash } });
      if (!key) return { principal: null, reason: 'unknown' };
      if (key.revokedAt) return { principal: null, reason: 'revoked' };
      const now = clock();
      if (key.expiresAt && key.expiresAt <= now) return { principal: null, reason: 'expired' };
      await db.$executeRawUnsafe(
        `UPDATE api_keys SET last_used_at = $2
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '${LAST_USED_RESOLUTION}')`,
        key.id,
        now,
      );
      return {
        principal: {
          kind: 'api_key',
          organizationId: key.organizationId,
          actorId: key.id,
          apiKeyId: key.id,
          mode: key.mode === 'live' ? 'live' : 'test',
          permissions: key.scopes as Permission[],
        },
        expiresAt: key.expiresAt ? key.expiresAt.toISOString() : null,
      };
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
