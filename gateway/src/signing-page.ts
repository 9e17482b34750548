import type { Router } from 'express';
import { PDFJS_BUILD_DIR, PDFJS_FILES, SIGNING_PAGE_CSP, SIGNING_PAGE_DIR } from '@sigil/signing-page';
import { staticPageRouter } from './static-page.ts';

/**
 * The hosted signing page and its embeddable component under `/sign` (apps/signing-page), with pdf.js's two browser
 * files under `/sign/vendor/pdfjs`. Strict headers: the page's own scripts only, no referrer (the link's token is in
 * the fragment, which browsers never send), never cached by shared caches.
 */
export function signingPageRouter(): Router {
  const pdfjs = new Set<string>(PDFJS_FILES);
  return staticPageRouter({
    dir: SIGNING_PAGE_DIR,
    headers: { 'content-security-policy': SIGNING_PAGE_CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cache-control': 'no-cache' },
    routes: (router) => {
      router.get('/vendor/pdfjs/:file', (req, res, next) => {
        if (!pdfjs.has(req.params.file)) return next();
        res.sendFile(req.params.file, { root: PDFJS_BUILD_DIR, headers: { 'content-type': 'text/javascript; charset=utf-8' } });
      });
      // The component is loaded by integrators' pages on other origins, as a module script: that takes CORS.
      router.get('/embed.js', (_req, res, next) => {
        res.setHeader('access-control-allow-origin', '*');
        next();
      });
    },
  });
}
