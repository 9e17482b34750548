import express, { type Express } from 'express';
import { AppError } from '@sigil/kit/errors';
import { internalRoute, requireServiceCaller, type PrincipalVerifier } from '@sigil/kit/auth';
import { INTERNAL_LINKS_PREFIX, LINK_CALLERS } from '@sigil/proto/internal-links';
import type { LinkVisitors } from './link-visitors.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function visitorOf(body: Record<string, unknown>) {
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  const email = typeof body.email === 'string' ? body.email.trim() : '';
  const publicUrl = typeof body.publicUrl === 'string' ? body.publicUrl : '';
  if (!name || name.length > 200 || !EMAIL.test(email) || email.length > 254 || !/^https?:\/\//.test(publicUrl)) {
    throw new AppError('validation-failed', 'name, email and publicUrl are required.', { errors: [{ pointer: '/body', detail: 'must have name, email and publicUrl' }] });
  }
  return { name, email, publicUrl };
}

/** The endpoints of proto/src/internal-links.ts, for the signing service only. */
export function mountLinkRoutes(app: Express, deps: { verifyPrincipal: PrincipalVerifier; visitors: LinkVisitors }): void {
  const requireCaller = requireServiceCaller(deps.verifyPrincipal, LINK_CALLERS, 'Only the signing service may call this endpoint.');
  app.get(`${INTERNAL_LINKS_PREFIX}/:linkId`, requireCaller, internalRoute(async (req, res) => void res.status(200).json(await deps.visitors.forVisitor(String(req.params.linkId)))));
  app.post(`${INTERNAL_LINKS_PREFIX}/:linkId/envelopes`, requireCaller, express.json({ limit: '16kb' }), internalRoute(async (req, res) => {
    res.status(201).json(await deps.visitors.createEnvelope(String(req.params.linkId), visitorOf((req.body ?? {}) as Record<string, unknown>)));
  }));
}
