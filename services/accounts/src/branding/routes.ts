import type { Express } from 'express';
import { uploadedFile, type OperationHandler, type PublicOperationHandler } from '@sigil/kit/api';
import { internalRoute, requireServiceCaller, serviceCaller, type PrincipalVerifier } from '@sigil/kit/auth';
import { AppError } from '@sigil/kit/errors';
import type { EntitlementsCache } from '@sigil/kit/entitlements';
import type { FileStore } from '@strata/stream/file-store';
import { BRANDING_CALLERS, BRANDING_ROUTE } from '@sigil/proto/internal-branding';
import type { Db } from '../db.ts';
import { createBrandingService } from './branding.ts';
import { createLogoService, LOGO_HEADERS, LOGO_MAX_BYTES } from './logo.ts';

export { LOGO_MAX_BYTES };

export interface BrandingDeps {
  db: Db;
  entitlements: EntitlementsCache;
  publicUrl: string;
  clock: () => Date;
  logoStore?: FileStore;
  notifyChanged?: (organizationId: string) => void;
}

/** Organization settings, e-mail branding, its preview and the logo: their operations and the internal endpoint. */
export function createBrandingRoutes(deps: BrandingDeps) {
  const shared = { db: deps.db, entitlements: deps.entitlements, publicUrl: deps.publicUrl, clock: deps.clock, notifyChanged: deps.notifyChanged ?? (() => undefined) };
  const branding = createBrandingService(shared);
  const logos = createLogoService({ ...shared, store: deps.logoStore });

  // Bound one by one in app.ts (the operations index reads each `operationId: handler` there).
  const getOrganizationSettings: OperationHandler<'getOrganizationSettings'> = async ({ principal }) => ({ status: 200, body: await branding.settings(principal.organizationId) });
  const getEmailBranding: OperationHandler<'getEmailBranding'> = async ({ principal }) => ({ status: 200, body: await branding.get(principal.organizationId) });
  const updateEmailBranding: OperationHandler<'updateEmailBranding'> = async ({ principal, body }) => ({ status: 200, body: await branding.update(principal.organizationId, body) });
  const previewEmailBranding: OperationHandler<'previewEmailBranding'> = async ({ principal, body }) => ({
    status: 200,
    body: await branding.preview(principal.organizationId, body as { branding?: unknown; template?: unknown } | undefined),
  });
  const uploadOrganizationLogo: OperationHandler<'uploadOrganizationLogo'> = async ({ principal, req }) => ({ status: 201, body: await logos.upload(principal.organizationId, uploadedFile(req, 'file')) });
  const getPublicLogo: PublicOperationHandler<'getPublicLogo'> = async ({ params }) => {
    const logo = await logos.read(params.org, params.file);
    return { status: 200, body: logo.bytes, headers: { ...LOGO_HEADERS, 'content-type': logo.contentType } };
  };

  /** `GET /internal/v1/organizations/{id}/branding` (proto/src/internal-branding.ts), for the services that send e-mail. */
  function mountInternal(app: Express, verifyPrincipal: PrincipalVerifier): void {
    const requireCaller = requireServiceCaller(verifyPrincipal, BRANDING_CALLERS, 'Only the services that send e-mail may read branding.');
    app.get(BRANDING_ROUTE, requireCaller, internalRoute(async (req, res) => {
      const organizationId = String(req.params.id);
      if (serviceCaller(res).organizationId !== organizationId) throw new AppError('forbidden', 'The caller asks about another organization than the one it names.');
      res.status(200).json(await branding.effective(organizationId));
    }));
  }

  return { getOrganizationSettings, getEmailBranding, updateEmailBranding, previewEmailBranding, uploadOrganizationLogo, getPublicLogo, mountInternal, branding, logos };
}
