/**
 * The Content-Security-Policy of the web apps' pages (the dashboard at /app, the console at /console): their own
 * scripts only (no inline code), API calls and live streams to the same origin, workers from the origin or blobs
 * (pdf.js), and never framed (clickjacking: they hold a session). Styles: the app's stylesheet, styles React sets
 * through the CSSOM (`element.style`, which CSP allows), and the one <style> element react-aria injects (touch
 * handling), which carries the page's nonce: react-aria reads it from `<meta property="csp-nonce">`, which the gateway
 * writes into each index.html it serves with a fresh nonce. Answers that are not a page (files, streams, refusals) get
 * no nonce at all: a fixed one would let injected markup through.
 */
export function webAppCsp(styleNonce?: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "worker-src 'self' blob:",
    styleNonce === undefined ? "style-src 'self'" : `style-src 'self' 'nonce-${styleNonce}'`,
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}
