/**
 * The SSO and SCIM administration trail: one row per connection change, test login, SSO sign-in (or its failure),
 * SCIM change and SCIM token event. Written in the transaction of the change it records, read newest first.
 */
import type { Prisma } from '../generated/prisma/client.ts';
import { newId } from '@sigil/kit/ids';
import { newestFirst, type ListPage } from '@sigil/kit/pagination';
import type { Db } from '../db.ts';

export type SsoAuditAction =
  | 'connection.created'
  | 'connection.updated'
  | 'connection.deleted'
  | 'connection.test_succeeded'
  | 'connection.test_failed'
  | 'sso.sign_in'
  | 'sso.sign_in_failed'
  | 'sso.member_provisioned'
  | 'sso.break_glass_sign_in'
  | 'scim.token_created'
  | 'scim.token_revoked'
  | 'scim.user_created'
  | 'scim.user_updated'
  | 'scim.user_deactivated'
  | 'scim.user_deleted'
  | 'scim.group_created'
  | 'scim.group_updated'
  | 'scim.group_deleted';

export interface SsoAuditEntry {
  organizationId: string;
  action: SsoAuditAction;
  actor: { type: 'member' | 'scim' | 'sso'; id?: string | null };
  subject?: string | null;
  providerId?: string | null;
  outcome?: 'success' | 'failure';
  reason?: string | null;
  details?: Record<string, unknown>;
  ip?: string | null;
  at?: Date;
}

type AuditWriter = Pick<Prisma.TransactionClient, 'ssoAuditEvent'>;

/** Adds one entry; pass the transaction of the change so the trail and the change commit together. */
export async function recordSsoAudit(db: AuditWriter, entry: SsoAuditEntry): Promise<void> {
  await db.ssoAuditEvent.create({
    data: {
      id: newId('ssoaud'),
      organizationId: entry.organizationId,
      action: entry.action,
      actorType: entry.actor.type,
      actorId: entry.actor.id ?? null,
      subject: entry.subject ?? null,
      providerId: entry.providerId ?? null,
      outcome: entry.outcome ?? 'success',
      reason: entry.reason ?? null,
      details: (entry.details ?? {}) as Prisma.InputJsonValue,
      ip: entry.ip ?? null,
      ...(entry.at ? { createdAt: entry.at } : {}),
    },
  });
}

type AuditRow = Awaited<ReturnType<Db['ssoAuditEvent']['findFirstOrThrow']>>;

function toView(row: AuditRow) {
  return {
    object: 'sso_audit_event' as const,
    id: row.id,
    action: row.action,
    actor: { type: row.actorType, id: row.actorId },
    subject: row.subject,
    providerId: row.providerId,
    outcome: row.outcome,
    reason: row.reason,
    details: row.details as Record<string, unknown>,
    ip: row.ip,
    createdAt: row.createdAt.toISOString(),
  };
}

export type SsoAuditView = ReturnType<typeof toView>;

/** A page of the organization's trail, newest first. */
export async function listSsoAudit(db: Db, organizationId: string, page: { limit: number; cursor?: string }): Promise<ListPage<SsoAuditView>> {
  const rows = await db.ssoAuditEvent.findMany({
    where: { organizationId, ...newestFirst.after(page.cursor) },
    orderBy: newestFirst.orderBy,
    take: page.limit + 1,
  });
  return newestFirst.page(rows, page.limit, toView);
}
