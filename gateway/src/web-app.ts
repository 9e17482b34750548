import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import compression from 'compression';
import express, { type RequestHandler, type Router } from 'express';
import { webAppCsp } from '@sigil/web-ui/server';

export interface WebAppOptions {
  /** Its name in the answers a person may read ("the dashboard", "the console"). */
  title: string;
  /** The built app: index.html and assets/. */
  distDir: string;
  /** What to run when the app is not built. */
  buildCommand: string;
}

const HEADERS = { 'content-security-policy': webAppCsp(), 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin', 'x-frame-options': 'DENY' };

/** Every answer under a web app's path: the strictest policy (a page's own adds its nonce), no sniffing, no referrer out, never framed. */
export function webAppHeaders(): RequestHandler {
  return (_req, res, next) => {
    for (const [name, value] of Object.entries(HEADERS)) res.setHeader(name, value);
    next();
  };
}

/**
 * A built single-page app under a path of the gateway: hashed files under `assets/` (immutable, a year), a missing
 * asset a 404, other files as they are, and index.html for every other path (a reload on a deep link works), never
 * cached, with a fresh style nonce for react-aria's one `<style>` element.
 */
export function webAppRouter(options: WebAppOptions): Router {
  const router = express.Router();
  const dist = options.distDir;
  // The app's files go compressed (brotli or gzip, as the browser accepts): about a third of their size.
  router.use(compression());
  router.use('/assets', express.static(path.join(dist, 'assets'), { index: false, redirect: false, dotfiles: 'deny', immutable: true, maxAge: '365d' }));
  // A file the build no longer has (a page open across a deploy asks for the old chunk): a 404, never index.html.
  // (fallthrough: false would hand the error to the gateway's problem handler, which answers any non-AppError 500.)
  router.use('/assets', (_req, res) => void res.status(404).type('text/plain').send(`No such file in this build of ${options.title}.\n`));
  router.use(express.static(dist, { index: false, redirect: false, dotfiles: 'deny' }));
  const indexHtml = indexHtmlReader(path.join(dist, 'index.html'));
  router.get(/.*/, (_req, res) => {
    const html = indexHtml();
    if (html === undefined) {
      res.status(503).type('text/plain').send(`${capitalised(options.title)} is not built: run \`${options.buildCommand}\` (scripts/bootstrap.sh does).\n`);
      return;
    }
    const nonce = randomBytes(16).toString('base64');
    res.setHeader('content-security-policy', webAppCsp(nonce));
    res.setHeader('cache-control', 'no-store');
    res.type('html').send(html.replace('<head>', `<head>\n    <meta property="csp-nonce" nonce="${nonce}" />`));
  });
  return router;
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** index.html as built, read again when the build replaced it (no restart after a rebuild); undefined while none. */
function indexHtmlReader(file: string): () => string | undefined {
  let cached: { mtimeMs: number; html: string } | undefined;
  return () => {
    let mtimeMs: number;
    try {
      mtimeMs = statSync(file).mtimeMs;
    } catch {
      return undefined;
    }
    if (cached?.mtimeMs !== mtimeMs) cached = { mtimeMs, html: readFileSync(file, 'utf8') };
    return cached.html;
  };
}
