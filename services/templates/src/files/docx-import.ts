import sanitizeHtml from 'sanitize-html';
import { badFile } from './pdf-inspect.ts';

/** The API's DocumentImport: an editable document-mode body, and what could not be kept. */
export interface DocumentImport {
  object: 'document_import';
  body: { format: 'html'; content: string };
  warnings: string[];
}

const ZIP_MAGIC = Buffer.from('PK\x03\x04', 'latin1');

/**
 * The HTML a document-mode body may hold: structure and emphasis, tables, links and inline images. Anything else
 * (scripts, styles, event handlers, `javascript:` links, remote images) is removed; nothing here ever runs.
 */
export const BODY_HTML_POLICY: sanitizeHtml.IOptions = {
  allowedTags: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'br', 'hr', 'ul', 'ol', 'li', 'blockquote', 'strong', 'b', 'em', 'i', 'u', 's', 'sub', 'sup', 'a', 'img', 'table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'caption'],
  allowedAttributes: { a: ['href'], img: ['src', 'alt', 'width', 'height'], td: ['colspan', 'rowspan'], th: ['colspan', 'rowspan'], ol: ['start'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['data'] },
  allowProtocolRelative: false,
  // Only images carried in the document itself.
  exclusiveFilter: (frame) => frame.tag === 'img' && !/^data:image\/(png|jpeg|gif|webp);base64,/i.test(frame.attribs.src ?? ''),
};

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
  const content = sanitizeHtml(result.value, BODY_HTML_POLICY);
  const warnings = [...new Set(result.messages.map((m) => m.message))];
  if (content !== result.value) {
    warnings.push('Some content was removed because document-mode bodies cannot hold it (links other than http, https or mailto, or unsupported markup).');
  }
  return { object: 'document_import', body: { format: 'html', content }, warnings };
}
