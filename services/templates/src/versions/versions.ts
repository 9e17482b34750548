import type { FieldError } from '@sigil/kit/errors';
import { notFound } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import { newestFirst, type ListPage } from '@sigil/kit/pagination';
import type { components } from '@sigil/proto/api/sigil';
import { Prisma } from '../generated/prisma/client.ts';
import type { Db, Tx } from '../db.ts';
import { draftErrors, parseDraft, type DraftField, type DraftInput } from './draft-input.ts';


interface VersionRow {
  id: string;
  templateId: string;
  number: number | null;
  fileId: string | null;
  body: unknown;
  roles: unknown;
  fields: unknown;
  variables: unknown;
  pageCount: number | null;
  createdAt: Date;
  publishedAt: Date | null;
}

/**
 * The API's TemplateVersion (api-decisions.md): the draft (`version: "draft"`) or a published, numbered version. The
 * contract fixes some members and allows more; the rest is what this service answers (its type is what this returns).
 */
export function toVersionView(row: VersionRow) {
  return {
    object: 'template_version',
    templateId: row.templateId,
    version: row.number ?? ('draft' as const),
    file: row.fileId,
    body: (row.body ?? null) as DraftInput['body'] | null,
    roles: row.roles as DraftInput['roles'],
    fields: row.fields as DraftInput['fields'],
    variables: row.variables as DraftInput['variables'],
    pageCount: row.pageCount,
    createdAt: row.createdAt.toISOString(),
    publishedAt: row.publishedAt?.toISOString() ?? null,
  } satisfies components['schemas']['TemplateVersion'];
}

export type TemplateVersionView = ReturnType<typeof toVersionView>;

type Page = { width: number; height: number };

/** In PDF mode every field stands on a page of the file, inside it. */
function placementErrors(fields: DraftField[], pages: Page[]): FieldError[] {
  const errors: FieldError[] = [];
  fields.forEach((field, i) => {
    const at = (member: string) => ({ pointer: `/body/fields/${i}${member}`, detail: '' });
    const missing = (['page', 'x', 'y', 'width', 'height'] as const).filter((key) => field[key] === undefined);
    if (missing.length > 0) return void errors.push({ ...at(`/${missing[0]}`), detail: 'is required when the draft is a file (PDF points from the top-left corner)' });
    const page = pages[(field.page as number) - 1];
    if (!page) return void errors.push({ ...at('/page'), detail: `is past the file's last page (${pages.length})` });
    if ((field.x as number) + (field.width as number) > page.width || (field.y as number) + (field.height as number) > page.height) {
      errors.push({ ...at(''), detail: `lies off page ${field.page} (${page.width} x ${page.height} points)` });
    }
  });
  return errors;
}

export function createVersionService({ db }: { db: Db }) {
  async function requireTemplate(tx: Tx | Db, organizationId: string, templateId: string): Promise<void> {
    const template = await tx.template.findFirst({ where: { id: templateId, organizationId }, select: { id: true } });
    if (!template) throw notFound(`Template ${templateId}`);
  }

  return {
    /** Creates or replaces the draft; `hasDraft` becomes true. */
    async saveDraft(organizationId: string, templateId: string, input: unknown): Promise<TemplateVersionView> {
      return db.$transaction(async (tx) => {
        // The template first: another organization's (or no) template is a 404 whatever the draft says.
        await requireTemplate(tx, organizationId, templateId);
        const draft = parseDraft(input);
        let pageCount: number | null = null;
        if (draft.file) {
          const file = await tx.templateFile.findFirst({ where: { id: draft.file, templateId, organizationId } });
          if (!file) throw draftErrors([{ pointer: '/body/file', detail: 'is not a file of this template' }]);
          const errors = placementErrors(draft.fields, file.pages as Page[]);
          if (errors.length > 0) throw draftErrors(errors);
          pageCount = file.pageCount;
        }
        await tx.templateVersion.deleteMany({ where: { templateId, number: null } });
        const row = await tx.templateVersion.create({
          data: {
            id: newId('tvr'),
            templateId,
            fileId: draft.file ?? null,
            body: draft.body ?? undefined,
            roles: draft.roles as object[],
            fields: draft.fields as object[],
            variables: draft.variables as object[],
            pageCount,
          },
        });
        await tx.template.update({ where: { id: templateId }, data: { hasDraft: true } });
        return toVersionView(row);
      });
    },

    /**
     * An uploaded file becomes the draft's document (the contract's "the upload becomes the template's draft
     * document"): a new draft holds only the file; an existing one keeps its roles and variables and the fields that
     * still fit a page of the new file, and drops the others (named in the answer so nothing goes silently).
     */
    async adoptFile(organizationId: string, templateId: string, fileId: string): Promise<{ removedFields: string[] }> {
      return db.$transaction(async (tx) => {
        const file = await tx.templateFile.findFirst({ where: { id: fileId, templateId, organizationId } });
        if (!file) throw notFound(`File ${fileId}`);
        const pages = file.pages as Page[];
        const draft = await tx.templateVersion.findFirst({ where: { templateId, number: null } });
        const fields = (draft?.fields ?? []) as unknown as DraftField[];
        const kept = fields.filter((field) => placementErrors([field], pages).length === 0);
        const document = { fileId, body: Prisma.DbNull, pageCount: file.pageCount, fields: kept as object[] };
        if (draft) await tx.templateVersion.update({ where: { id: draft.id }, data: document });
        else await tx.templateVersion.create({ data: { id: newId('tvr'), templateId, roles: [], variables: [], ...document } });
        await tx.template.update({ where: { id: templateId }, data: { hasDraft: true } });
        return { removedFields: fields.filter((field) => !kept.includes(field)).map((field) => field.id) };
      });
    },

    /** A version by number, `latest` (newest published) or `draft`. */
    async get(organizationId: string, templateId: string, ref: string): Promise<TemplateVersionView> {
      await requireTemplate(db, organizationId, templateId);
      const row =
        ref === 'draft'
          ? await db.templateVersion.findFirst({ where: { templateId, number: null } })
          : ref === 'latest'
            ? await db.templateVersion.findFirst({ where: { templateId, number: { not: null } }, orderBy: { number: 'desc' } })
            : await db.templateVersion.findFirst({ where: { templateId, number: Number(ref) } });
      if (!row) throw notFound(ref === 'draft' ? `The draft of template ${templateId}` : `Version ${ref} of template ${templateId}`);
      return toVersionView(row);
    },

    /** Every version for the dashboard: published ones newest first, then the draft. */
    async all(organizationId: string, templateId: string): Promise<TemplateVersionView[]> {
      await requireTemplate(db, organizationId, templateId);
      const rows = await db.templateVersion.findMany({ where: { templateId }, orderBy: [{ number: { sort: 'desc', nulls: 'last' } }] });
      return rows.map(toVersionView);
    },

    /** The page sizes of a file of the organization (what a field's position is checked against), in points. */
    async filePages(organizationId: string, fileId: string): Promise<Page[]> {
      const file = await db.templateFile.findFirst({ where: { id: fileId, organizationId }, select: { pages: true } });
      return (file?.pages ?? []) as Page[];
    },

    /** Published versions only, newest first. */
    async list(organizationId: string, templateId: string, limit: number, cursor: string | undefined): Promise<ListPage<TemplateVersionView>> {
      await requireTemplate(db, organizationId, templateId);
      const rows = await db.templateVersion.findMany({
        where: { templateId, number: { not: null }, AND: [newestFirst.after(cursor)] },
        orderBy: newestFirst.orderBy,
        take: limit + 1,
      });
      return newestFirst.page(rows, limit, toVersionView);
    },
  };
}

export type VersionService = ReturnType<typeof createVersionService>;
