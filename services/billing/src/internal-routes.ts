import type { Express, NextFunction, Request, Response } from 'express';
import { requireServiceCaller, serviceCaller, type PrincipalVerifier } from '@sigil/kit/auth';
import { BILLING_CALLERS, ENTITLEMENTS_PATH } from '@sigil/proto/internal-billing';
import type { BillingService } from './billing.ts';

/** The endpoints of proto/src/internal-billing.ts: the services that enforce plan limits read entitlements here. */
export function mountInternalRoutes(app: Express, deps: { verifyPrincipal: PrincipalVerifier; billing: BillingService }): void {
  const requireCaller = requireServiceCaller(deps.verifyPrincipal, BILLING_CALLERS, 'Only Sigil services may read entitlements.');
  app.get(ENTITLEMENTS_PATH, requireCaller, async (_req: Request, res: Response, next: NextFunction) => {
    try {
      res.setHeader('cache-control', 'no-store');
      res.status(200).json(await deps.billing.entitlements(serviceCaller(res).organizationId));
    } catch (error) {
      next(error);
    }
  });
}
