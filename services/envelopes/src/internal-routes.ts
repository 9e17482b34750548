import express, { type Express, type Request, type Response } from 'express';
import { AppError } from '@sigil/kit/errors';
import { internalRoute, requireServiceCaller, serviceCaller, type PrincipalVerifier } from '@sigil/kit/auth';
import {
  ENVELOPE_CALLERS,
  EXCHANGE_TOKEN_PATH,
  INTERNAL_ENVELOPES_PREFIX,
  type SubmitValues,
} from '@sigil/proto/internal-envelopes';
import type { SignerRef, SignerService } from './signer.ts';
import type { SealedDocuments } from './sealed.ts';
import type { TokenService } from './tokens.ts';

export interface InternalRoutesDeps {
  verifyPrincipal: PrincipalVerifier;
  tokens: TokenService;
  signer: SignerService;
  sealed: SealedDocuments;
}

const SHA256_HEX = /^[a-f0-9]{64}$/;
const RECIPIENT = `${INTERNAL_ENVELOPES_PREFIX}/envelopes/:envelopeId/recipients/:recipientId`;

/** The endpoints of proto/src/internal-envelopes.ts, for the signing service only. */
export function mountInternalRoutes(app: Express, deps: InternalRoutesDeps): void {
  const requireCaller = requireServiceCaller(deps.verifyPrincipal, ENVELOPE_CALLERS, 'Only the signing service may call this endpoint.');
  const json = express.json({ limit: '4mb' });
  const refOf = (req: Request, res: Response): SignerRef => ({
    organizationId: serviceCaller(res).organizationId,
    envelopeId: String(req.params.envelopeId),
    recipientId: String(req.params.recipientId),
  });
  const actorOf = (body: Record<string, unknown>) => ({ from: String(body.from ?? '').slice(0, 100), userAgent: String(body.userAgent ?? '').slice(0, 1000) });

  app.post(EXCHANGE_TOKEN_PATH, requireCaller, json, internalRoute(async (req, res) => {
    const hash = (req.body as { tokenHash?: unknown } | undefined)?.tokenHash;
    if (typeof hash !== 'string' || !SHA256_HEX.test(hash)) throw new AppError('validation-failed', 'tokenHash must be a lower-case hex SHA-256.', { errors: [{ pointer: '/body/tokenHash', detail: 'must be a lower-case hex SHA-256' }] });
    res.status(200).json(await deps.tokens.exchange(hash));
  }));
  const envelopeOf = (req: Request) => String(req.params.envelopeId);
  app.get(`${INTERNAL_ENVELOPES_PREFIX}/envelopes/:envelopeId/completed-document`, requireCaller, internalRoute(async (req, res) => {
    res.status(200).type('application/pdf').send(await deps.sealed.toSeal(serviceCaller(res).organizationId, envelopeOf(req)));
  }));
  app.put(`${INTERNAL_ENVELOPES_PREFIX}/envelopes/:envelopeId/sealed-document`, requireCaller, express.raw({ type: 'application/pdf', limit: '60mb' }), internalRoute(async (req, res) => {
    await deps.sealed.keep(serviceCaller(res).organizationId, envelopeOf(req), Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
    res.status(204).end();
  }));
  app.put(`${INTERNAL_ENVELOPES_PREFIX}/envelopes/:envelopeId/seal-failure`, requireCaller, json, internalRoute(async (req, res) => {
    const reason = (req.body as { reason?: unknown } | undefined)?.reason;
    if (typeof reason !== 'string' || !reason) throw new AppError('validation-failed', 'A reason is required.', { errors: [{ pointer: '/body/reason', detail: 'must be a non-empty string' }] });
    await deps.sealed.fail(serviceCaller(res).organizationId, envelopeOf(req), reason);
    res.status(204).end();
  }));
  app.put(`${INTERNAL_ENVELOPES_PREFIX}/envelopes/:envelopeId/certificate-document`, requireCaller, express.raw({ type: 'application/pdf', limit: '20mb' }), internalRoute(async (req, res) => {
    await deps.sealed.keepCertificate(serviceCaller(res).organizationId, envelopeOf(req), Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
    res.status(204).end();
  }));
  app.get(`${RECIPIENT}/signer-view`, requireCaller, internalRoute(async (req, res) => void res.status(200).json(await deps.signer.view(refOf(req, res)))));
  app.get(`${RECIPIENT}/document`, requireCaller, internalRoute(async (req, res) => void res.status(200).type('application/pdf').send(await deps.signer.document(refOf(req, res)))));
  app.post(`${RECIPIENT}/viewed`, requireCaller, json, internalRoute(async (req, res) => {
    await deps.signer.viewed(refOf(req, res), actorOf((req.body ?? {}) as Record<string, unknown>));
    res.status(204).end();
  }));
  app.post(`${RECIPIENT}/submit`, requireCaller, json, internalRoute(async (req, res) => {
    const body = (req.body ?? {}) as Partial<SubmitValues>;
    const fields = body.fields && typeof body.fields === 'object' && !Array.isArray(body.fields) ? body.fields : {};
    res.status(200).json(await deps.signer.submit(refOf(req, res), { fields, consent: body.consent === true, ...actorOf(body as Record<string, unknown>) }));
  }));
  app.post(`${RECIPIENT}/decline`, requireCaller, json, internalRoute(async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const reason = typeof body.reason === 'string' && body.reason.trim() ? body.reason.trim().slice(0, 1000) : null;
    res.status(200).json(await deps.signer.decline(refOf(req, res), reason, actorOf(body)));
  }));
}
