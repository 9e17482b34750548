import express, { type Express, type Request, type Response } from 'express';
import { internalRoute, requireServiceCaller, serviceCaller, type PrincipalVerifier } from '@sigil/kit/auth';
import { INTERNAL_TEMPLATES_PREFIX, TEMPLATE_CALLERS } from '@sigil/proto/internal-templates';
import { parseRecordTemplateUse, parseVersionRef, type TemplateUses } from './template-uses.ts';

/** The endpoints of proto/src/internal-templates.ts, for the services in TEMPLATE_CALLERS only. */
export function mountInternalRoutes(app: Express, deps: { verifyPrincipal: PrincipalVerifier; uses: TemplateUses }): void {
  const requireCaller = requireServiceCaller(deps.verifyPrincipal, TEMPLATE_CALLERS, 'Only the envelopes and signing services may call this endpoint.');
  const route = (handler: (req: Request, res: Response, organizationId: string) => Promise<void>) => internalRoute((req, res) => handler(req, res, serviceCaller(res).organizationId));
  const base = `${INTERNAL_TEMPLATES_PREFIX}/:templateId`;

  app.get(`${base}/versions/:version`, requireCaller, route(async (req, res, organizationId) => {
    res.status(200).json(await deps.uses.version(organizationId, String(req.params.templateId), parseVersionRef(req.params.version, '/path/version')));
  }));
  app.post(`${base}/uses`, requireCaller, express.json({ limit: '4kb' }), route(async (req, res, organizationId) => {
    res.status(200).json(await deps.uses.use(organizationId, String(req.params.templateId), parseRecordTemplateUse(req.body)));
  }));
  app.get(`${base}/versions/:version/document`, requireCaller, route(async (req, res, organizationId) => {
    const ref = parseVersionRef(req.params.version, '/path/version');
    res.status(200).type('application/pdf').send(await deps.uses.document(organizationId, String(req.params.templateId), ref));
  }));
}
