import { createRequire } from 'node:module';
import type sanitizeHtml from 'sanitize-html';

/**
 * The HTML a document-mode body may hold: structure and emphasis, tables, links and inline images. Anything else
 * (scripts, styles, event handlers, `javascript:` links, remote images) is removed; nothing here ever runs.
 */
const BODY_HTML_POLICY: sanitizeHtml.IOptions = {
  allowedTags: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'br', 'hr', 'ul', 'ol', 'li', 'blockquote', 'strong', 'b', 'em', 'i', 'u', 's', 'sub', 'sup', 'a', 'img', 'table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'caption'],
  allowedAttributes: { a: ['href'], img: ['src', 'alt', 'width', 'height'], td: ['colspan', 'rowspan'], th: ['colspan', 'rowspan'], ol: ['start'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['data'] },
  allowProtocolRelative: false,
  // Only images carried in the document itself.
  exclusiveFilter: (frame) => frame.tag === 'img' && !/^data:image\/(png|jpeg|gif|webp);base64,/i.test(frame.attribs.src ?? ''),
};

const require = createRequire(import.meta.url);
let sanitizer: typeof sanitizeHtml | undefined;

/** `html` reduced to what a body may hold. sanitize-html (with postcss) is loaded by the first body that needs it. */
export function sanitizeBodyHtml(html: string): string {
  sanitizer ??= require('sanitize-html') as typeof sanitizeHtml;
  return sanitizer(html, BODY_HTML_POLICY);
}
