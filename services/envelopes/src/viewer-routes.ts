import express, { type Express, type Request, type Response } from 'express';
import { AppError } from '@sigil/kit/errors';
import { internalRoute, requireServiceCaller, serviceCaller, type PrincipalVerifier } from '@sigil/kit/auth';
import { INTERNAL_VIEWERS_PREFIX, VIEWER_CALLERS, VIEWER_EXCHANGE_PATH, VIEWER_RESOLVE_PATH } from '@sigil/proto/internal-viewers';
import type { ViewerAccess, ViewerRef } from './viewer-access.ts';

const SHA256_HEX = /^[a-f0-9]{64}$/;
const VIEWER = `${INTERNAL_VIEWERS_PREFIX}/envelopes/:envelopeId/viewers/:viewerId`;

/** A member of the body that must be a lower-case hex SHA-256 (400 naming it otherwise). */
function hashOf(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  if (typeof value !== 'string' || !SHA256_HEX.test(value)) throw new AppError('validation-failed', `${name} must be a lower-case hex SHA-256.`, { errors: [{ pointer: `/body/${name}`, detail: 'must be a lower-case hex SHA-256' }] });
  return value;
}

/** The endpoints of proto/src/internal-viewers.ts, for the signing service only. */
export function mountViewerRoutes(app: Express, deps: { verifyPrincipal: PrincipalVerifier; viewers: ViewerAccess }): void {
  const requireCaller = requireServiceCaller(deps.verifyPrincipal, VIEWER_CALLERS, 'Only the signing service may call this endpoint.');
  const json = express.json({ limit: '16kb' });
  const refOf = (req: Request, res: Response): ViewerRef => ({ organizationId: serviceCaller(res).organizationId, envelopeId: String(req.params.envelopeId), viewerId: String(req.params.viewerId) });

  app.post(VIEWER_EXCHANGE_PATH, requireCaller, json, internalRoute(async (req, res) => {
    res.status(200).json(await deps.viewers.exchange(hashOf(req.body, 'linkTokenHash'), hashOf(req.body, 'accessTokenHash')));
  }));
  app.post(VIEWER_RESOLVE_PATH, requireCaller, json, internalRoute(async (req, res) => void res.status(200).json(await deps.viewers.resolve(hashOf(req.body, 'accessTokenHash')))));
  app.get(`${VIEWER}/envelope`, requireCaller, internalRoute(async (req, res) => void res.status(200).json(await deps.viewers.view(refOf(req, res)))));
  app.post(`${VIEWER}/opened`, requireCaller, internalRoute(async (req, res) => {
    await deps.viewers.opened(refOf(req, res));
    res.status(204).end();
  }));
  app.get(`${VIEWER}/document`, requireCaller, internalRoute(async (req, res) => void res.status(200).type('application/pdf').send(await deps.viewers.document(refOf(req, res)))));
}
