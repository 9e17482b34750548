import type { TemplateRecord } from '@sigil/proto/events';
import type { components } from '@sigil/proto/api/sigil';
import { AppError, notFound } from '@sigil/kit/errors';
import { enqueueEvent } from '@sigil/kit/bus';
import { newId } from '@sigil/kit/ids';
import { newestFirst, type ListPage } from '@sigil/kit/pagination';
import type { Db } from './db.ts';

/** The API's Template, the same shape the `template.created` event carries. */
export type TemplateView = TemplateRecord;

export interface ListTemplatesInput {
  limit: number;
  cursor?: string;
  q?: string;
}

interface TemplateRow {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  metadata: unknown;
  latestVersion: number | null;
  hasDraft: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export function toTemplateView(row: TemplateRow): TemplateView {
  return {
    id: row.id,
    object: 'template',
    name: row.name,
    description: row.description,
    metadata: (row.metadata ?? {}) as Record<string, string>,
    latestVersion: row.latestVersion,
    hasDraft: row.hasDraft,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Use cases of the templates service; every call is scoped to one organization. */
export function createTemplateService({ db }: { db: Db }) {
  return {
    async create(organizationId: string, input: components['schemas']['CreateTemplate']): Promise<TemplateView> {
      return db.$transaction(async (tx) => {
        const row = await tx.template.create({
          data: {
            id: newId('tpl'),
            organizationId,
            name: input.name,
            description: input.description ?? null,
            metadata: input.metadata ?? {},
          },
        });
        const template = toTemplateView(row);
        await enqueueEvent(tx, { type: 'template.created', organizationId, data: { template } });
        return template;
      });
    },

    async get(organizationId: string, id: string): Promise<TemplateView> {
      const row = await db.template.findFirst({ where: { id, organizationId } });
      if (!row) throw notFound(`Template ${id}`);
      return toTemplateView(row);
    },

    /** Newest first; `q` matches the name or description, case-insensitively. */
    async list(organizationId: string, input: ListTemplatesInput): Promise<ListPage<TemplateView>> {
      const rows = await db.template.findMany({
        where: { organizationId, AND: [matching(input.q), newestFirst.after(input.cursor)] },
        orderBy: newestFirst.orderBy,
        take: input.limit + 1,
      });
      return newestFirst.page(rows, input.limit, toTemplateView);
    },

    /** How many templates `q` matches (all of them without it): the dashboard's count above the list. */
    async count(organizationId: string, q: string | undefined): Promise<number> {
      return db.template.count({ where: { organizationId, AND: [matching(q)] } });
    },

    /**
     * Deletes a template that no envelope or signing link ever used. Envelopes record a use synchronously
     * (`POST /internal/v1/templates/{id}/uses`, under the same row lock as here), and the `envelope.created` and
     * `signing_link.created` events record it again, idempotently.
     */
    async delete(organizationId: string, id: string): Promise<void> {
      await db.$transaction(async (tx) => {
        const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
          `SELECT id FROM templates WHERE id = $1 AND organization_id = $2 FOR UPDATE`,
          id,
          organizationId,
        );
        if (rows.length === 0) throw notFound(`Template ${id}`);
        const usage = await tx.templateUsage.findFirst({ where: { templateId: id }, orderBy: { usedAt: 'asc' } });
        if (usage) {
          const what = usage.usedByKind === 'envelope' ? 'an envelope' : 'a signing link';
          throw new AppError('template-in-use', `Template ${id} was used by ${what} (${usage.usedById}) and cannot be deleted.`);
        }
        await tx.template.delete({ where: { id } });
        await enqueueEvent(tx, { type: 'template.deleted', organizationId, data: { templateId: id } });
      });
    },
  };
}

export type TemplateService = ReturnType<typeof createTemplateService>;

/** `q` matches the name or description, case-insensitively. */
function matching(q: string | undefined) {
  const text = q?.trim();
  return text ? { OR: [{ name: { contains: text, mode: 'insensitive' as const } }, { description: { contains: text, mode: 'insensitive' as const } }] } : {};
}
