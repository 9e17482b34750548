import { notFound } from '@sigil/kit/errors';
import type { Db } from '../db.ts';
import type { FileStore } from '../files/storage.ts';
import type { DraftField, DraftInput } from './draft-input.ts';
import type { BodyPrinter } from './print-body.ts';

export interface DocumentDeps {
  db: Db;
  store: FileStore;
  printer: BodyPrinter;
}

/**
 * A version's PDF. A published version: its file. The draft: the uploaded original, or with `edited` the draft as
 * it would publish, each field drawn as an outlined box with its id. A document-mode draft has no original: it is
 * printed as it would publish.
 */
export async function versionDocument(deps: DocumentDeps, organizationId: string, templateId: string, ref: string, edited: boolean): Promise<Buffer> {
  const version = await findVersion(deps.db, organizationId, templateId, ref);
  const fields = version.fields as unknown as DraftField[];
  if (!version.fileId) {
    const body = version.body as DraftInput['body'];
    return (await deps.printer.print(body?.content ?? '', fields)).pdf;
  }
  const file = await deps.db.templateFile.findUniqueOrThrow({ where: { id: version.fileId } });
  const original = await deps.store.get(file.storageKey);
  return version.number === null && edited ? outlineFields(original, fields) : original;
}

/** A version by `draft`, `latest` or number; 404 when the template or the version does not exist. */
export async function findVersion(db: Db, organizationId: string, templateId: string, ref: string) {
  const template = await db.template.findFirst({ where: { id: templateId, organizationId }, select: { id: true } });
  if (!template) throw notFound(`Template ${templateId}`);
  const where =
    ref === 'draft' ? { templateId, number: null } : ref === 'latest' ? { templateId, number: { not: null } } : { templateId, number: Number(ref) };
  const version = await db.templateVersion.findFirst({ where, orderBy: { number: 'desc' } });
  if (!version) throw notFound(ref === 'draft' ? `The draft of template ${templateId}` : `Version ${ref} of template ${templateId}`);
  return version;
}

/** Draws each placed field as an outlined box labelled with its id (positions are points from the top-left). */
async function outlineFields(pdf: Buffer, fields: DraftField[]): Promise<Buffer> {
  // pdf-lib (~20 MiB once loaded) comes with the first use (`import()` is cached), not at start.
  const { PDFDocument, StandardFonts, rgb } = await import('pdf-lib');
  const doc = await PDFDocument.load(pdf);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const pages = doc.getPages();
  for (const field of fields) {
    const page = field.page ? pages[field.page - 1] : undefined;
    if (!page || field.x === undefined || field.y === undefined || !field.width || !field.height) continue;
    const bottom = page.getHeight() - field.y - field.height;
    page.drawRectangle({ x: field.x, y: bottom, width: field.width, height: field.height, borderColor: rgb(0.1, 0.35, 0.85), borderWidth: 1, color: rgb(0.1, 0.35, 0.85), opacity: 0.08, borderOpacity: 0.9 });
    page.drawText(`${field.id} (${field.type})`, { x: field.x + 3, y: bottom + field.height - 10, size: 7, font, color: rgb(0.1, 0.35, 0.85) });
  }
  return Buffer.from(await doc.save());
}
