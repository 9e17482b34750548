import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { STRATA_PRINCIPAL_HEADER, type StrataPrincipalVerifier } from '@sigil/kit/auth';
import { AppError, isAppError } from '@sigil/kit/errors';
import type { Logger } from '@sigil/kit/log';
import { CATALOG_CALLERS, INTERNAL_CATALOG_PREFIX, type FailSandboxRestore, type PrepareSandboxRestore, type StartSandboxRestore } from '@sigil/proto/internal-catalog';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { SandboxRestores } from './restores/sandbox-restores.ts';

/** The catalog's routes for other Strata services (proto/src/internal-catalog.ts), outside the public contract. */
export function mountInternalRoutes(app: Express, deps: { verifyPrincipal: StrataPrincipalVerifier; sandboxRestores: SandboxRestores; log: Logger }): void {
  const router = express.Router();
  router.use(express.json({ limit: '1mb' }));
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    try {
      const token = req.headers[STRATA_PRINCIPAL_HEADER];
      if (typeof token !== 'string') throw new Error('missing');
      const principal = await deps.verifyPrincipal(token);
      if (!principal.service || !(CATALOG_CALLERS as readonly string[]).includes(principal.id)) throw new Error('not a caller of these routes');
      res.locals.caller = principal;
    } catch {
      res.status(401).json({ error: 'Only the Strata services may call the catalog’s internal routes.' });
      return;
    }
    next();
  });
  const handle = (run: (req: Request, caller: StrataPrincipal) => Promise<{ status: number; body: unknown }>) => async (req: Request, res: Response) => {
    try {
      const { status, body } = await run(req, res.locals.caller as StrataPrincipal);
      res.status(status).json(body);
    } catch (error) {
      const known = isAppError(error) ? error : undefined;
      if (!known) deps.log.error({ err: error, path: req.path }, 'internal route failed');
      const answer = known ?? new AppError('internal', 'The catalog could not answer.');
      res.status(answer.status).json({ error: answer.message });
    }
  };
  router.post('/', handle(async (req, caller) => ({ status: 201, body: await deps.sandboxRestores.prepare(caller, req.body as PrepareSandboxRestore) })));
  router.post('/:ns/:name/start', handle(async (req) => ({ status: 200, body: await deps.sandboxRestores.start(String(req.params.ns), String(req.params.name), req.body as StartSandboxRestore) })));
  router.post('/:ns/:name/fail', handle(async (req) => {
    await deps.sandboxRestores.fail(String(req.params.ns), String(req.params.name), String((req.body as FailSandboxRestore).message ?? 'the sandbox could not start'));
    return { status: 200, body: {} };
  }));
  app.use(INTERNAL_CATALOG_PREFIX, router);
}
