import type { Principal } from '@sigil/kit/auth';
import { enqueueEvent } from '@sigil/kit/bus';
import { AppError, notFound } from '@sigil/kit/errors';
import { newestFirst, type ListPage } from '@sigil/kit/pagination';
import type { FileStore } from '@strata/stream/file-store';
import { visibleTo } from './caller.ts';
import type { Db, Tx } from './db.ts';
import type { Prisma } from './generated/prisma/client.ts';
import { ENVELOPE_STATUSES, envelopeTransition, type EnvelopeStatus } from './state.ts';
import { ENVELOPE_INCLUDE, toEnvelopeView, type EnvelopeRow, type EnvelopeView } from './views.ts';

export interface EnvelopeServiceDeps {
  db: Db;
  store: FileStore;
  clock: () => Date;
}

export interface ListEnvelopesInput {
  limit: number;
  cursor?: string;
  status?: string;
  seal?: string;
  q?: string;
  template?: string;
  testMode?: unknown;
  /** Only envelopes in progress waiting on a recipient whose turn began at or before this moment. */
  waitingSince?: Date;
}

/** Envelopes waiting on a recipient whose turn began at or before `since` (recipients' `sentAt` is their turn's start). */
function waitingOnSomeoneSince(since: Date | undefined): Prisma.EnvelopeWhereInput {
  if (!since) return {};
  return { status: 'sent', recipients: { some: { status: { in: ['sent', 'viewed'] }, sentAt: { lte: since } } } };
}

/** Locks an envelope the caller may see (`FOR UPDATE`), so concurrent changes of one envelope apply one after the other. */
export async function lockEnvelope(tx: Tx, where: Prisma.EnvelopeWhereInput & { id: string }): Promise<EnvelopeRow> {
  await tx.$queryRawUnsafe('SELECT 1 FROM envelopes WHERE id = $1 FOR UPDATE', where.id);
  const row = await tx.envelope.findFirst({ where, include: ENVELOPE_INCLUDE });
  if (!row) throw notFound(`Envelope ${where.id}`);
  return row;
}

/** Reads, lists, voids and serves the documents of envelopes; every call is scoped to what the caller may see. */
export function createEnvelopeService(deps: EnvelopeServiceDeps) {
  const { db } = deps;

  async function find(principal: Principal, id: string): Promise<EnvelopeRow> {
    const row = await db.envelope.findFirst({ where: { ...visibleTo(principal), id }, include: ENVELOPE_INCLUDE });
    if (!row) throw notFound(`Envelope ${id}`);
    return row;
  }

  return {
    async get(principal: Principal, id: string): Promise<EnvelopeView> {
      return toEnvelopeView(await find(principal, id));
    },

    /** Newest first, only the caller's mode; `q` matches the externalId and the recipients' e-mails and names. */
    async list(principal: Principal, input: ListEnvelopesInput): Promise<ListPage<EnvelopeView>> {
      const q = input.q?.trim();
      const where: Prisma.EnvelopeWhereInput = {
        ...visibleTo(principal, input.testMode),
        ...(input.status ? { status: input.status } : {}),
        ...(input.seal ? { seal: input.seal } : {}),
        ...(input.template ? { templateId: input.template } : {}),
        AND: [
          newestFirst.after(input.cursor),
          waitingOnSomeoneSince(input.waitingSince),
          q
            ? {
                OR: [
                  { externalId: { contains: q, mode: 'insensitive' } },
                  { recipients: { some: { OR: [{ email: { contains: q, mode: 'insensitive' } }, { name: { contains: q, mode: 'insensitive' } }] } } },
                ],
              }
            : {},
        ],
      };
      const rows = await db.envelope.findMany({ where, orderBy: newestFirst.orderBy, take: input.limit + 1, include: ENVELOPE_INCLUDE });
      return newestFirst.page(rows, input.limit, toEnvelopeView);
    },

    /** How many envelopes per status were created at or after `since`: one grouped count in SQL, every status listed. */
    async countByStatus(principal: Principal, input: { since: Date; testMode?: unknown }): Promise<Array<{ status: EnvelopeStatus; count: number }>> {
      const groups = await db.envelope.groupBy({
        by: ['status'],
        where: { ...visibleTo(principal, input.testMode), createdAt: { gte: input.since } },
        _count: { _all: true },
      });
      return ENVELOPE_STATUSES.map((status) => ({ status, count: groups.find((g) => g.status === status)?._count._all ?? 0 }));
    },

    /** Only while in progress (`rendering` or `sent`); recipients are told through `envelope.voided`. */
    async void(principal: Principal, id: string, reason: string | undefined): Promise<EnvelopeView> {
      return db.$transaction(async (tx) => {
        const row = await lockEnvelope(tx, { ...visibleTo(principal), id });
        const status = envelopeTransition(row.status, 'void', `Envelope ${id}`);
        const updated = await tx.envelope.update({
          where: { id },
          data: { status, voidReason: reason?.trim() || null, endedAt: deps.clock() },
          include: ENVELOPE_INCLUDE,
        });
        const envelope = toEnvelopeView(updated);
        await enqueueEvent(tx, { type: 'envelope.voided', organizationId: row.organizationId, data: { envelopeId: id, testMode: row.testMode, reason: updated.voidReason, actor: { kind: principal.kind, id: principal.actorId }, envelope } });
        return envelope;
      });
    },

    /** The original PDF once rendered; `sealed` and `certificate` once the envelope is sealed (409 before). */
    async document(principal: Principal, id: string, version: string): Promise<Buffer> {
      const row = await find(principal, id);
      if (version === 'original') {
        if (!row.originalKey) throw new AppError('document-not-ready', `Envelope ${id} is still rendering; its document is not ready yet.`);
        return deps.store.get(row.originalKey);
      }
      if (version === 'sealed' && row.sealedKey) return deps.store.get(row.sealedKey);
      if (version === 'certificate' && row.sealedKey && row.certificateKey) return deps.store.get(row.certificateKey);
      throw new AppError('document-not-ready', `The ${version} document of envelope ${id} exists once the envelope is completed and sealed (seal is ${row.seal}).`);
    },
  };
}

export type EnvelopeService = ReturnType<typeof createEnvelopeService>;
