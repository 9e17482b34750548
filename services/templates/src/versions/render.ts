import type { PDFDocument } from 'pdf-lib';
// pdf-lib (~20 MiB once loaded) comes with the first use (`import()` is cached), not at start.

import { pointerTo, type FieldError } from '@sigil/kit/errors';
import type { Db } from '../db.ts';
import type { FileStore } from '../files/storage.ts';
import { draftErrors, VARIABLE_TAG, type DraftField, type DraftInput, type DraftVariable } from './draft-input.ts';
import { findVersion } from './documents.ts';
import type { BodyPrinter } from './print-body.ts';

export interface RenderDeps {
  db: Db;
  store: FileStore;
  printer: BodyPrinter;
}

export type Values = Record<string, string>;

/** The RenderPreview body's `variables`, checked against the version's: one pointer per missing or unknown one. */
function valuesOf(input: unknown, declared: DraftVariable[]): Values {
  const given = (typeof input === 'object' && input !== null ? (input as { variables?: unknown }).variables : undefined) ?? {};
  const errors: FieldError[] = [];
  const values: Values = {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw draftErrors([{ pointer: '/body/variables', detail: 'must be an object of variable values' }]);
  for (const [name, value] of Object.entries(given)) {
    if (!declared.some((v) => v.name === name)) errors.push({ pointer: pointerTo('body', 'variables', name), detail: 'is not a variable of this version' });
    else if (value !== null && typeof value === 'object') errors.push({ pointer: pointerTo('body', 'variables', name), detail: 'must be a string, number or boolean' });
    else if (value !== null && value !== undefined) values[name] = String(value);
  }
  for (const variable of declared) {
    if (variable.required && !values[variable.name]?.trim()) errors.push({ pointer: pointerTo('body', 'variables', variable.name), detail: 'is required' });
  }
  if (errors.length > 0) throw draftErrors(errors);
  return values;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A preview of a version with its variables filled in, a diagonal PREVIEW watermark on every page and TEST under it
 * for a test-mode caller. A document-mode version is printed again with the values in the body; a file version gets
 * each text field bound to a variable filled in its box.
 */
export async function renderPreview(deps: RenderDeps, organizationId: string, templateId: string, ref: string, input: unknown, mode: 'test' | 'live'): Promise<Buffer> {
  const version = await findVersion(deps.db, organizationId, templateId, ref);
  const values = valuesOf(input, version.variables as unknown as DraftVariable[]);
  const fields = version.fields as unknown as DraftField[];
  if (version.fileId) {
    const file = await deps.db.templateFile.findUniqueOrThrow({ where: { id: version.fileId } });
    return previewOfPdf(await deps.store.get(file.storageKey), fields, values, mode);
  }
  const body = version.body as DraftInput['body'];
  const content = (body?.content ?? '').replace(VARIABLE_TAG, (tag, name: string) => (name in values ? escapeHtml(values[name] as string) : tag));
  return watermark((await deps.printer.print(content, fields)).pdf, mode);
}

/** The preview of a file version's PDF: its variable-bound text fields filled, then watermarked (one load, one save). */
export async function previewOfPdf(pdf: Buffer, fields: DraftField[], values: Values, mode: 'test' | 'live'): Promise<Buffer> {
  const { PDFDocument: Pdf } = await import('pdf-lib');
  const doc = await Pdf.load(pdf);
  await fillTextFields(doc, fields, values);
  await stampPages(doc, mode);
  return Buffer.from(await doc.save());
}

async function fillTextFields(doc: PDFDocument, fields: DraftField[], values: Values): Promise<void> {
  const { StandardFonts } = await import('pdf-lib');
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const pages = doc.getPages();
  for (const field of fields) {
    const value = field.variable ? values[field.variable] : undefined;
    const page = field.page ? pages[field.page - 1] : undefined;
    if (value === undefined || !page || field.x === undefined || field.y === undefined || !field.height) continue;
    const size = Math.min(12, field.height * 0.7);
    page.drawText(value, { x: field.x + 2, y: page.getHeight() - field.y - field.height + (field.height - size) / 2, size, font, maxWidth: field.width });
  }
}

async function watermark(pdf: Buffer, mode: 'test' | 'live'): Promise<Buffer> {
  const { PDFDocument: Pdf } = await import('pdf-lib');
  const doc = await Pdf.load(pdf);
  await stampPages(doc, mode);
  return Buffer.from(await doc.save());
}

/** A diagonal PREVIEW across every page, and TEST under it for a test-mode caller. */
async function stampPages(doc: PDFDocument, mode: 'test' | 'live'): Promise<void> {
  const { StandardFonts, degrees, rgb } = await import('pdf-lib');
  const font = await doc.embedFont(StandardFonts.HelveticaBold);
  for (const page of doc.getPages()) {
    const { width, height } = page.getSize();
    const size = Math.min(width, height) / 6;
    const stamp = (text: string, offset: number) =>
      page.drawText(text, {
        x: width / 2 - (font.widthOfTextAtSize(text, size) / 2) * Math.SQRT1_2 + offset,
        y: height / 2 - (font.widthOfTextAtSize(text, size) / 2) * Math.SQRT1_2 - offset,
        size,
        font,
        rotate: degrees(45),
        color: rgb(0.8, 0.1, 0.1),
        opacity: 0.18,
      });
    stamp('PREVIEW', 0);
    if (mode === 'test') stamp('TEST', size * 1.1);
  }
}
