import { createHash } from 'node:crypto';
import { notFound } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import type { components } from '@sigil/proto/api/sigil';
import type { Db } from '../db.ts';
import { importDocx, type DocumentImport } from './docx-import.ts';
import { OFFICE_TYPES, type OfficeConverter } from './office-convert.ts';
import { inspectPdf, type PdfFacts } from './pdf-inspect.ts';
import type { FileStore } from './storage.ts';

export interface TemplateFileDeps {
  db: Db;
  store: FileStore;
  converter: OfficeConverter;
  maxPages: number;
  /** Makes the stored file the template's draft document (the version service's `adoptFile`). */
  adoptFile: (organizationId: string, templateId: string, fileId: string) => Promise<{ removedFields: string[] }>;
}

export const PDF = 'application/pdf';

/** Uploads of template files: a PDF kept as uploaded, a word-processor file converted to PDF first. */
export function createTemplateFileService(deps: TemplateFileDeps) {
  const requireTemplate = async (organizationId: string, templateId: string): Promise<void> => {
    const template = await deps.db.template.findFirst({ where: { id: templateId, organizationId }, select: { id: true } });
    if (!template) throw notFound(`Template ${templateId}`);
  };
  return {
    /** A DOCX as an editable document-mode body; nothing is stored. */
    async importDocument(organizationId: string, templateId: string, bytes: Buffer): Promise<DocumentImport> {
      await requireTemplate(organizationId, templateId);
      return importDocx(bytes);
    },

    async upload(organizationId: string, templateId: string, contentType: string, bytes: Buffer) {
      await requireTemplate(organizationId, templateId);
      const converted = contentType in OFFICE_TYPES;
      const pdf = converted ? await deps.converter.toPdf(bytes, contentType) : bytes;
      const facts = await inspectPdf(pdf, deps.maxPages);
      const row = await storeFile(deps, { organizationId, templateId, contentType, converted, pdf, facts });
      const { removedFields } = await deps.adoptFile(organizationId, templateId, row.id);
      // The draft's fields that no longer fit a page of this file were taken out of the draft.
      return { ...toFileView(row), draftFieldsRemoved: removedFields } satisfies components['schemas']['TemplateFile'];
    },
  };
}

export type TemplateFileService = ReturnType<typeof createTemplateFileService>;

interface NewFile {
  organizationId: string;
  templateId: string;
  contentType: string;
  converted: boolean;
  pdf: Uint8Array;
  facts: PdfFacts;
}

/** Stores a PDF (S3, then its row): an upload, or the print of a document-mode body at publish. */
export async function storeFile(deps: Pick<TemplateFileDeps, 'db' | 'store'>, file: NewFile) {
  const id = newId('tfl');
  const storageKey = `${file.organizationId}/${file.templateId}/files/${id}.pdf`;
  const pdf = Buffer.from(file.pdf);
  await deps.store.put(storageKey, pdf, PDF);
  return deps.db.templateFile.create({
    data: {
      id,
      templateId: file.templateId,
      organizationId: file.organizationId,
      contentType: file.contentType,
      converted: file.converted,
      pageCount: file.facts.pageCount,
      pages: file.facts.pages,
      sha256: createHash('sha256').update(pdf).digest('hex'),
      size: pdf.length,
      storageKey,
    },
  });
}

/**
 * The API's TemplateFile (api-decisions.md): the stored PDF, with what was uploaded. The contract fixes some members
 * and allows more; the rest is what this service answers.
 */
function toFileView(row: Awaited<ReturnType<typeof storeFile>>) {
  return {
    id: row.id,
    object: 'template_file',
    templateId: row.templateId,
    contentType: row.contentType,
    converted: row.converted,
    pageCount: row.pageCount,
    pages: row.pages as PdfFacts['pages'],
    sha256: row.sha256,
    size: row.size,
    createdAt: row.createdAt.toISOString(),
  } satisfies components['schemas']['TemplateFile'];
}
