import express, { type Router } from 'express';
import { CONSOLE_DIST_DIR } from '@strata/console';
import { webAppHeaders, webAppRouter } from './web-app.ts';

/**
 * The Strata console under `/console`: the built single-page app (a reload on /console/targets/... works). It reads
 * the gateway's GraphQL and writes the console API (`/api/v1`) with the access proxy's credentials, which the
 * browser sends by itself (the access cookie), and follows `/api/v1/events` for live updates.
 */
export function consoleRouter(options: { distDir?: string } = {}): Router {
  const router = express.Router();
  router.use(webAppHeaders());
  router.use(webAppRouter({ title: 'the console', distDir: options.distDir ?? CONSOLE_DIST_DIR, buildCommand: 'npm run build -w @strata/console' }));
  return router;
}
