import express, { type Router } from 'express';
import { PDFJS_BUILD_DIR, PDFJS_FILES, SIGNING_PAGE_CSP, SIGNING_PAGE_DIR } from '@sigil/signing-page';

/**
 * The hosted signing page and its embeddable component under `/sign` (apps/signing-page), with pdf.js's two browser
 * files under `/sign/vendor/pdfjs`. Strict headers: the page's own scripts only, no referrer (the link's token is in
 * the fragment, which browsers never send), never cached by shared caches.
 */
export function signingPageRouter(): Router {
  const router = express.Router();
  router.use((_req, res, next) => {
    res.setHeader('content-security-policy', SIGNING_PAGE_CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('cache-control', 'no-cache');
    next();
  });
  const pdfjs = new Set<string>(PDFJS_FILES);
  router.get('/vendor/pdfjs/:file', (req, res, next) => {
    if (!pdfjs.has(req.params.file)) return next();
    res.sendFile(req.params.file, { root: PDFJS_BUILD_DIR, headers: { 'content-type': 'text/javascript; charset=utf-8' } });
  });
  // The component is loaded by integrators' pages on other origins, as a module script: that takes CORS.
  router.get('/embed.js', (_req, res, next) => {
    res.setHeader('access-control-allow-origin', '*');
    next();
  });
  // `/sign` and `/sign/` are the page itself (the link's token follows in the fragment).
  router.get('/', (_req, res) => res.sendFile('index.html', { root: SIGNING_PAGE_DIR }));
  router.use(express.static(SIGNING_PAGE_DIR, { index: false, redirect: false, dotfiles: 'deny' }));
  return router;
}
