import path from 'node:path';

/** The verification page's own files (HTML, CSS, ES modules), served as they are under `/verify`. */
export const VERIFY_PAGE_DIR = path.resolve(import.meta.dirname, '../public');

/** Its own scripts only, API calls to the same origin, nothing framed: a page people trust must not be embeddable. */
export const VERIFY_PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
