import type { Express } from 'express';
import { internalRoute, requireServiceCaller, serviceCaller, type PrincipalVerifier } from '@sigil/kit/auth';
import { BILLING_CALLERS, ENTITLEMENTS_PATH } from '@sigil/proto/internal-billing';
import type { BillingService } from './billing.ts';

/** The endpoints of proto/src/internal-billing.ts: the services that enforce plan limits read entitlements here. */
export function mountInternalRoutes(app: Express, deps: { verifyPrincipal: PrincipalVerifier; billing: BillingService }): void {
  const requireCaller = requireServiceCaller(deps.verifyPrincipal, BILLING_CALLERS, 'Only Sigil services may read entitlements.');
  app.get(ENTITLEMENTS_PATH, requireCaller, internalRoute(async (_req, res) => void res.status(200).json(await deps.billing.entitlements(serviceCaller(res).organizationId))));
}
