import express, { type Router } from 'express';

/**
 * A static web app served by the gateway (the signing page, the verification page): its own headers on every answer,
 * `index` (default `index.html`) at its root, its files as they are, nothing listed. `routes` adds what an app needs
 * before its files.
 */
export function staticPageRouter(options: { dir: string; headers: Record<string, string>; index?: string; routes?: (router: Router) => void }): Router {
  const router = express.Router();
  router.use((_req, res, next) => {
    for (const [name, value] of Object.entries(options.headers)) res.setHeader(name, value);
    next();
  });
  options.routes?.(router);
  router.get('/', (_req, res) => res.sendFile(options.index ?? 'index.html', { root: options.dir }));
  router.use(express.static(options.dir, { index: false, redirect: false, dotfiles: 'deny' }));
  return router;
}
