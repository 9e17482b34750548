import { badFile } from './pdf-inspect.ts';
import { sanitizeBodyHtml } from './body-html.ts';

/** The API's DocumentImport: an editable document-mode body, and what could not be kept. */
export interface DocumentImport {
  object: 'document_import';
  body: { format: 'html'; content: string };
  warnings: string[];
}

const ZIP_MAGIC = Buffer.from('PK\x03\x04', 'latin1');

/** A DOCX as an editable document-mode body (mammoth), sanitized, with mammoth's messages as warnings. */
export async function importDocx(bytes: Buffer): Promise<DocumentImport> {
  if (!bytes.subarray(0, 4).equals(ZIP_MAGIC)) throw badFile('The file is not a DOCX document.');
  let result: { value: string; messages: Array<{ type: string; message: string }> };
  try {
    // mammoth (~19 MiB) is loaded with the first import, not in every templates process.
    const { default: mammoth } = await import('mammoth');
    result = await mammoth.convertToHtml({ buffer: bytes });
  } catch (error) {
    throw badFile(`The DOCX document could not be read: ${(error as Error).message}`);
  }
  const content = sanitizeBodyHtml(result.value);
  const warnings = [...new Set(result.messages.map((m) => m.message))];
  if (content !== result.value) {
    warnings.push('Some content was removed because document-mode bodies cannot hold it (links other than http, https or mailto, or unsupported markup).');
  }
  return { object: 'document_import', body: { format: 'html', content }, warnings };
}
