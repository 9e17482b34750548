import { createRequire } from 'node:module';

/**
 * SVG logos: recognised by parsing (an XML document whose root is `<svg>` in the SVG namespace) and sanitised with
 * DOMPurify's SVG profile on the parsed document, so the served file runs nothing and loads nothing: no `<script>`,
 * no event handler attributes, no `<foreignObject>`, no link or reference that is not a `#fragment` of the file itself
 * (`href`, `xlink:href`, `url(...)`, `image-set(...)` and the like in attributes and styles, `@import`, `@font-face`).
 *
 * jsdom and DOMPurify are loaded with the first SVG (jsdom is heavy), and through `require` on purpose: jsdom's types
 * pull the DOM library into the whole program, whose `fetch` types then clash with Node's. The few DOM members used
 * here are typed below.
 */

interface XmlNode {
  localName: string;
  namespaceURI: string | null;
  textContent: string | null;
  parentNode: { removeChild(node: XmlNode): unknown } | null;
}
export interface SvgDocument {
  documentElement: XmlNode | null;
  getElementsByTagName(name: string): { length: number };
}
interface SanitizeHookData {
  attrName: string;
  attrValue: string;
  keepAttr: boolean;
  tagName: string;
}
interface Purifier {
  addHook(name: 'uponSanitizeAttribute' | 'uponSanitizeElement', hook: (node: XmlNode, data: SanitizeHookData) => void): void;
  sanitize(node: XmlNode, config: Record<string, unknown>): unknown;
}
interface Window {
  DOMParser: new () => { parseFromString(text: string, type: string): SvgDocument };
  XMLSerializer: new () => { serializeToString(node: XmlNode): string };
}

const SVG_NS = 'http://www.w3.org/2000/svg';
/**
 * CSS that can load something: `url(` of anything but a local `#fragment`, `@import`, `@font-face`, and the image
 * functions that take a bare string (`image-set("…")`, `image()`, `cross-fade()`, `element()`).
 */
const EXTERNAL_CSS = /url\s*\(\s*['"]?\s*(?!#)|@import|@font-face|image-set\s*\(|\bimage\s*\(|cross-fade\s*\(|\belement\s*\(/i;

let instance: { purify: Purifier; window: Window } | undefined;

function sanitizer() {
  if (instance) return instance;
  const require = createRequire(import.meta.url);
  const { JSDOM } = require('jsdom') as { JSDOM: new (html: string) => { window: Window } };
  const createDOMPurify = require('dompurify') as (window: Window) => Purifier;
  const { window } = new JSDOM('');
  const purify = createDOMPurify(window);
  purify.addHook('uponSanitizeAttribute', (_node, data) => {
    const name = data.attrName.toLowerCase();
    const value = data.attrValue ?? '';
    if ((name === 'href' || name.endsWith(':href')) && !value.trim().startsWith('#')) data.keepAttr = false;
    if (EXTERNAL_CSS.test(value)) data.keepAttr = false;
  });
  purify.addHook('uponSanitizeElement', (node, data) => {
    if (data.tagName === 'style' && EXTERNAL_CSS.test(node.textContent ?? '')) node.parentNode?.removeChild(node);
  });
  instance = { purify, window };
  return instance;
}

/** Whether the bytes are an SVG document (well-formed XML, root `<svg>`), without entity declarations. */
export function parseSvg(bytes: Buffer): SvgDocument | undefined {
  const text = bytes.toString('utf8');
  // Entity declarations are no part of a logo, and expanding them is how XML bombs work.
  if (/<!ENTITY/i.test(text) || !/<svg[\s>]/i.test(text)) return undefined;
  const doc = new (sanitizer().window.DOMParser)().parseFromString(text, 'image/svg+xml');
  const root = doc.documentElement;
  if (!root || doc.getElementsByTagName('parsererror').length > 0 || root.localName !== 'svg' || root.namespaceURI !== SVG_NS) return undefined;
  return doc;
}

/** The sanitised SVG as UTF-8 bytes (an XML declaration, then the `<svg>` element). */
export function sanitizeSvg(doc: SvgDocument): Buffer {
  const { purify, window } = sanitizer();
  const root = doc.documentElement as XmlNode;
  purify.sanitize(root, { IN_PLACE: true, USE_PROFILES: { svg: true, svgFilters: true }, FORBID_TAGS: ['foreignObject', 'script'], ADD_TAGS: ['use'] });
  const markup = new window.XMLSerializer().serializeToString(root);
  return Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n${markup}\n`, 'utf8');
}
