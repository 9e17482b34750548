import type { PDFDocument } from 'pdf-lib';
// pdf-lib (~20 MiB once loaded) comes with the first use (`import()` is cached), not at start.

import { AppError } from '@sigil/kit/errors';

export interface PdfFacts {
  pageCount: number;
  /** Width and height of each page, in PDF points. */
  pages: Array<{ width: number; height: number }>;
}

const PDF_MAGIC = Buffer.from('%PDF-');

/**
 * What a stored template PDF must be: a PDF (the magic number within the first KiB, as readers accept it), one that
 * parses, is not encrypted, has at least one page and at most `maxPages`. Each failure says which in its detail.
 */
export async function inspectPdf(bytes: Uint8Array, maxPages: number): Promise<PdfFacts> {
  if (Buffer.from(bytes.subarray(0, 1024)).indexOf(PDF_MAGIC) < 0) {
    throw badFile('The file is not a PDF (no %PDF- header).');
  }
  const { PDFDocument: Pdf } = await import('pdf-lib');
  let doc: PDFDocument;
  try {
    doc = await Pdf.load(bytes, { ignoreEncryption: true, updateMetadata: false, throwOnInvalidObject: true });
  } catch {
    // An encrypted file's objects do not parse either: say which it is.
    throw badFile(hasEncryptDictionary(bytes) ? ENCRYPTED : 'The PDF is corrupt and cannot be read.');
  }
  if (doc.isEncrypted) throw badFile(ENCRYPTED);
  let pages: Array<{ width: number; height: number }>;
  try {
    pages = doc.getPages().map((page) => page.getSize());
  } catch {
    // A file that parses but has no catalog or page tree (`%PDF-1.7` and nothing else) has no pages to read.
    throw badFile('The PDF is corrupt and cannot be read.');
  }
  if (pages.length === 0) throw badFile('The PDF has no pages.');
  if (pages.length > maxPages) throw badFile(`The document has ${pages.length} pages; at most ${maxPages} are allowed.`);
  return { pageCount: pages.length, pages: pages.map(({ width, height }) => ({ width: round(width), height: round(height) })) };
}

const ENCRYPTED = 'The PDF is encrypted or password-protected: upload a version without protection.';

/** The trailer names an /Encrypt dictionary (in the last 64 KiB, where trailers and xref streams live). */
function hasEncryptDictionary(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.subarray(Math.max(0, bytes.length - 65_536))).includes('/Encrypt');
}

const round = (n: number) => Math.round(n * 100) / 100;

/** A file the API refuses: 400 `validation-failed` pointing at the body (docs/templates.md lists each sentence). */
export function badFile(detail: string): AppError {
  return new AppError('validation-failed', detail, { errors: [{ pointer: '/body', detail }] });
}
