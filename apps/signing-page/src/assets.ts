import { createRequire } from 'node:module';
import path from 'node:path';

/** The hosted signing page's own files (HTML, CSS, ES modules), served as they are under `/sign`. */
export const SIGNING_PAGE_DIR = path.resolve(import.meta.dirname, '../public');

/** pdf.js's browser build (the page renders the PDF's pages with it), served under `/sign/vendor/pdfjs`. */
export const PDFJS_BUILD_DIR = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/build/pdf.min.mjs'));

/** The files of pdf.js the page loads: nothing else of the package is served. */
export const PDFJS_FILES = ['pdf.min.mjs', 'pdf.worker.min.mjs'] as const;

/**
 * The page's Content-Security-Policy: its own scripts only (no inline code), its API calls to the same origin, PDF
 * pages drawn from blobs, and frame-ancestors open so integrators can embed it (the embed is the product).
 */
export const SIGNING_PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "worker-src 'self' blob:",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  'frame-ancestors *',
].join('; ');
