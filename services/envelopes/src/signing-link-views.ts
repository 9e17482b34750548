import type { components } from '@sigil/proto/api/sigil';
import type { Db, Tx } from './db.ts';
import type { SigningLink } from './generated/prisma/client.ts';

export interface LinkUsage {
  /** Envelopes created through the link today (UTC day). */
  today: number;
  total: number;
}

/** The start of `now`'s UTC day: "today" of a link's usage and of its daily cap. */
export const startOfUtcDay = (now: Date): Date => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));

/** The link's public page (served by the gateway under `/l/`). */
export const linkPageUrl = (publicUrl: string, id: string): string => `${publicUrl.replace(/\/+$/, '')}/l/${id}`;

/** Each link's usage, in one grouped count. */
export async function linkUsage(db: Db | Tx, ids: string[], now: Date): Promise<Map<string, LinkUsage>> {
  if (ids.length === 0) return new Map();
  const rows = await db.$queryRawUnsafe<Array<{ id: string; today: bigint; total: bigint }>>(
    'SELECT signing_link_id AS id, count(*) FILTER (WHERE created_at >= $2) AS today, count(*) AS total FROM signing_link_uses WHERE signing_link_id = ANY($1::text[]) GROUP BY signing_link_id',
    ids,
    startOfUtcDay(now),
  );
  return new Map(rows.map((r) => [r.id, { today: Number(r.today), total: Number(r.total) }]));
}

/**
 * The API's SigningLink: the contract's members (`object`, `enabled`, the limits at the top level) and api-decisions'
 * (`status`, `limits`, `title`, `version`, `role`, `usage`), which the contract allows beside them.
 */
export function toSigningLinkView(row: SigningLink, usage: LinkUsage | undefined, publicUrl: string) {
  const limits = { perEmailPerDay: row.perEmailPerDay, perIpPerHour: row.perIpPerHour, dailyCap: row.dailyCap };
  return {
    id: row.id,
    object: 'signing_link' as const,
    url: linkPageUrl(publicUrl, row.id),
    status: row.status as 'active' | 'paused',
    enabled: row.status === 'active',
    testMode: row.testMode,
    template: row.templateId,
    version: row.templateVersion,
    role: row.role,
    title: row.title,
    name: row.title,
    limits,
    ...limits,
    variables: row.variables as Record<string, string>,
    cc: row.cc as Array<{ email: string; name?: string }>,
    usage: usage ?? { today: 0, total: 0 },
    createdAt: row.createdAt.toISOString(),
  } satisfies components['schemas']['SigningLink'];
}

export type SigningLinkView = ReturnType<typeof toSigningLinkView>;
