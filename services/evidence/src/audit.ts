import type { Principal } from '@sigil/kit/auth';
import { AppError, notFound } from '@sigil/kit/errors';
import { decodeCursor, encodeCursor } from '@sigil/kit/pagination';
import { auditHash, GENESIS_HASH, verifyChain, type AuditItem, type ChainCheck } from '@sigil/proto/audit-chain';
import type { DomainEvent } from '@sigil/proto/events';
import { ENVELOPE_EVENT_TYPES } from '@sigil/proto/gen/events';
import type { Db, Tx } from './db.ts';

/**
 * The events the audit trail records: every happening of an envelope that envelopes and signing publish (the events whose
 * payload requires `envelopeId`; one list in proto, which the dashboard's trail reads too).
 */
export const AUDITED_EVENTS = ENVELOPE_EVENT_TYPES;

type EnvelopeEventData = { envelopeId: string; testMode: boolean; envelope?: { status?: string }; actor?: { kind: string; id?: string }; recipientId?: string; from?: string; userAgent?: string } & Record<string, unknown>;

/** Who did it: a recipient (with their address and browser), the API key or member named by the event, or the system. */
function actorOf(data: EnvelopeEventData): Record<string, unknown> {
  if (data.from !== undefined || data.userAgent !== undefined) return { kind: 'recipient', recipientId: data.recipientId, ip: data.from ?? '', userAgent: data.userAgent ?? '' };
  if (data.actor) return { ...data.actor };
  return { kind: 'system' };
}

/** What an entry keeps of its event: the event's own members (not the whole envelope), and the envelope's status then. */
function dataOf(data: EnvelopeEventData): Record<string, unknown> {
  const { envelope, envelopeId: _e, testMode: _t, actor: _a, from: _f, userAgent: _u, ...rest } = data;
  return { ...rest, status: envelope?.status ?? null };
}

/**
 * Appends one event to its envelope's chain, in the caller's transaction: the head row is locked, so the entries of one
 * envelope are numbered 1, 2, 3... without gaps whatever runs at once; the source event id is unique, so a redelivered
 * event is never recorded twice.
 */
export async function appendEvent(event: DomainEvent, tx: Tx): Promise<void> {
  const data = event.data as unknown as EnvelopeEventData;
  if (await tx.auditEvent.findUnique({ where: { sourceEventId: event.id }, select: { seq: true } })) return;
  await tx.$executeRawUnsafe(
    'INSERT INTO audit_heads (envelope_id, organization_id, test_mode, seq, hash) VALUES ($1, $2, $3, 0, $4) ON CONFLICT DO NOTHING',
    data.envelopeId,
    event.organizationId,
    data.testMode,
    GENESIS_HASH,
  );
  const [head] = await tx.$queryRawUnsafe<Array<{ seq: number; hash: string }>>('SELECT seq, hash FROM audit_heads WHERE envelope_id = $1 FOR UPDATE', data.envelopeId);
  const body = { seq: (head?.seq ?? 0) + 1, type: event.type, at: event.occurredAt, actor: actorOf(data), data: dataOf(data), prevHash: head?.hash ?? GENESIS_HASH };
  const hash = auditHash(body);
  await tx.auditEvent.create({
    data: { envelopeId: data.envelopeId, organizationId: event.organizationId, testMode: data.testMode, sourceEventId: event.id, ...body, actor: body.actor as object, data: body.data as object, hash },
  });
  await tx.auditHead.update({ where: { envelopeId: data.envelopeId }, data: { seq: body.seq, hash } });
  // Delivered to every replica's listeners when (and only if) this transaction commits.
  await tx.$executeRawUnsafe(`SELECT pg_notify('${APPENDED_CHANNEL}', $1)`, data.envelopeId);
}

/** The Postgres notification channel of appended entries (payload: the envelope id). */
export const APPENDED_CHANNEL = 'audit_appended';

export interface EventListInput {
  limit: number;
  cursor?: string;
}

/** `GET /v1/envelopes/{id}/events`: a page in `seq` order, and the verification of the whole chain. */
export function createAuditService({ db }: { db: Db }) {
  return {
    /** Throws 404 unless the caller may see the envelope's trail. */
    async requireVisible(principal: Principal, envelopeId: string) {
      const head = await db.auditHead.findFirst({
        where: { envelopeId, organizationId: principal.organizationId, ...(principal.kind === 'session' ? {} : { testMode: principal.mode === 'test' }) },
      });
      if (!head) throw notFound(`Envelope ${envelopeId}`);
      return head;
    },

    /** The organization's newest entries in one mode, across its envelopes (an index on organization, mode, time). */
    async recent(principal: Principal, input: { limit: number; testMode: boolean }) {
      const rows = await db.auditEvent.findMany({
        where: { organizationId: principal.organizationId, testMode: principal.kind === 'session' ? input.testMode : principal.mode === 'test' },
        orderBy: [{ createdAt: 'desc' }, { envelopeId: 'desc' }, { seq: 'desc' }],
        take: input.limit,
      });
      return rows.map((row) => ({ ...toItem(row), envelopeId: row.envelopeId }));
    },

    /** Entries after `seq`, in order (the live stream's read). */
    async after(envelopeId: string, seq: number, limit = 500): Promise<AuditItem[]> {
      return (await db.auditEvent.findMany({ where: { envelopeId, seq: { gt: seq } }, orderBy: { seq: 'asc' }, take: limit })).map(toItem);
    },

    async list(principal: Principal, envelopeId: string, input: EventListInput) {
      const head = await this.requireVisible(principal, envelopeId);
      const after = input.cursor ? Number(decodeCursor(input.cursor, 1)[0]) : 0;
      if (!Number.isInteger(after) || after < 0) throw new AppError('validation-failed', 'The cursor is not valid.', { errors: [{ pointer: '/query/cursor', detail: 'Unknown or malformed cursor.' }] });
      const rows = await db.auditEvent.findMany({ where: { envelopeId }, orderBy: { seq: 'asc' } });
      const items = rows.map(toItem);
      const page = items.filter((i) => i.seq > after).slice(0, input.limit + 1);
      const hasMore = page.length > input.limit;
      const data = hasMore ? page.slice(0, input.limit) : page;
      return {
        object: 'list' as const,
        data,
        hasMore,
        nextCursor: hasMore ? encodeCursor([(data.at(-1) as AuditItem).seq]) : null,
        chain: checkWithHead(items, head),
      };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;

function toItem(row: { seq: number; type: string; at: string; actor: unknown; data: unknown; prevHash: string; hash: string }): AuditItem {
  return { seq: row.seq, type: row.type, at: row.at, actor: row.actor as Record<string, unknown>, data: row.data as Record<string, unknown>, prevHash: row.prevHash, hash: row.hash };
}

/** The chain as stored, and its end as the head row remembers it: a removed last entry breaks it too. */
function checkWithHead(items: AuditItem[], head: { seq: number; hash: string }): ChainCheck {
  const check = verifyChain(items);
  if (check.valid && (head.seq !== items.length || head.hash !== check.head)) return { ...check, valid: false, firstInvalidSeq: Math.min(head.seq, items.length) + 1 };
  return check;
}
