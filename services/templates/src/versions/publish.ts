import { AppError } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import type { Db } from '../db.ts';
import { inspectPdf } from '../files/pdf-inspect.ts';
import type { FileStore } from '../files/storage.ts';
import { storeFile } from '../files/template-files.ts';
import type { DraftField, DraftInput } from './draft-input.ts';
import type { BodyPrinter } from './print-body.ts';
import { toVersionView, type TemplateVersionView } from './versions.ts';

export interface PublishDeps {
  db: Db;
  store: FileStore;
  printer: BodyPrinter;
  maxPages: number;
}

/**
 * Freezes the draft into the next numbered version. A document-mode body is printed to PDF first (outside the
 * transaction: it takes a while) and each `{{field:id}}` becomes the field's recorded position; the version then
 * refers to that PDF like any uploaded file. `no-draft` (409) without a draft.
 */
export async function publishDraft(deps: PublishDeps, organizationId: string, templateId: string): Promise<TemplateVersionView> {
  const { db } = deps;
  const template = await db.template.findFirst({ where: { id: templateId, organizationId }, select: { id: true } });
  if (!template) throw new AppError('not-found', `Template ${templateId} was not found.`);
  const draft = await db.templateVersion.findFirst({ where: { templateId, number: null } });
  if (!draft) throw new AppError('no-draft', `Template ${templateId} has no draft to publish: save one with PUT /v1/templates/${templateId}/draft.`);

  let fileId = draft.fileId;
  let pageCount = draft.pageCount;
  let fields = draft.fields as unknown as DraftField[];
  if (!fileId) {
    const body = draft.body as DraftInput['body'];
    const printed = await deps.printer.print(body?.content ?? '', fields);
    const facts = await inspectPdf(printed.pdf, deps.maxPages);
    const file = await storeFile(deps, { organizationId, templateId, contentType: 'text/html', converted: true, pdf: printed.pdf, facts });
    fileId = file.id;
    pageCount = facts.pageCount;
    fields = fields.map((field) => ({ ...field, ...printed.positions[field.id] }));
  }

  return db.$transaction(async (tx) => {
    await tx.$queryRawUnsafe(`SELECT id FROM templates WHERE id = $1 FOR UPDATE`, templateId);
    const current = await tx.templateVersion.findFirst({ where: { templateId, number: null } });
    if (!current || current.id !== draft.id) throw new AppError('conflict', 'The draft changed while it was being published; publish again.');
    const last = await tx.templateVersion.findFirst({ where: { templateId, number: { not: null } }, orderBy: { number: 'desc' }, select: { number: true } });
    const number = (last?.number ?? 0) + 1;
    const row = await tx.templateVersion.create({
      data: {
        id: newId('tvr'),
        templateId,
        number,
        fileId,
        body: draft.body ?? undefined,
        roles: draft.roles as object[],
        fields: fields as object[],
        variables: draft.variables as object[],
        pageCount,
        publishedAt: new Date(),
      },
    });
    await tx.templateVersion.delete({ where: { id: draft.id } });
    await tx.template.update({ where: { id: templateId }, data: { latestVersion: number, hasDraft: false } });
    return toVersionView(row);
  });
}
