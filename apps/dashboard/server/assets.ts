import path from 'node:path';

/** The built dashboard (`npm run build -w @sigil/dashboard`, run by scripts/bootstrap.sh): index.html and assets/. */
export const DASHBOARD_DIST_DIR = path.resolve(import.meta.dirname, '../dist');

/**
 * The dashboard's Content-Security-Policy: its own scripts only (no inline code), API calls and the live stream to the
 * same origin, PDF pages drawn from blobs by pdf.js's worker, and never framed (clickjacking: it holds a session).
 * Styles: the app's stylesheet, styles React sets through the CSSOM (`element.style`, which CSP allows), and the one
 * <style> element react-aria injects (touch handling), which carries the page's nonce: react-aria reads it from
 * `<meta property="csp-nonce">`, which the gateway writes into each index.html it serves with a fresh nonce.
 */
export function dashboardCsp(styleNonce: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "worker-src 'self' blob:",
    `style-src 'self' 'nonce-${styleNonce}'`,
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}
