import express, { type Express } from 'express';
import { AppError } from '@sigil/kit/errors';
import { internalRoute, requireServiceCaller, type PrincipalVerifier } from '@sigil/kit/auth';
import type { ApiKeyService } from './api-keys.ts';
import type { SessionService } from './sessions.ts';
import { GATEWAY_ACTOR_ID, INTERNAL_AUTHENTICATE_PATH, type AuthenticateRequest, type AuthenticateResponse } from '@sigil/proto/internal-auth';
import { SHA256_HEX } from './tokens.ts';

export interface InternalRoutesDeps {
  verifyPrincipal: PrincipalVerifier;
  apiKeys: ApiKeyService;
  sessions: SessionService;
}

/** Routes for other services, outside the public contract. Only the gateway may call them. */
export function mountInternalRoutes(app: Express, deps: InternalRoutesDeps): void {
  const requireGateway = requireServiceCaller(deps.verifyPrincipal, [GATEWAY_ACTOR_ID], 'Only the gateway may call this endpoint.');

  app.post(INTERNAL_AUTHENTICATE_PATH, requireGateway, express.json({ limit: '4kb' }), internalRoute(async (req, res) => {
    const body = parseAuthenticateRequest(req.body);
    const result: AuthenticateResponse =
      body.type === 'api_key' ? await deps.apiKeys.authenticate(body.secretHash) : await deps.sessions.authenticate(body.tokenHash);
    res.status(200).json(result);
  }));
}

export function parseAuthenticateRequest(body: unknown): AuthenticateRequest {
  const invalid = (pointer: string, detail: string) =>
    new AppError('validation-failed', `Field ${pointer.slice('/body/'.length) || 'body'} ${detail}.`, { errors: [{ pointer, detail }] });
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('/body', 'must be a JSON object');
  const { type } = body as Record<string, unknown>;
  const field = type === 'api_key' ? 'secretHash' : type === 'session' ? 'tokenHash' : undefined;
  if (!field) throw invalid('/body/type', "must be 'api_key' or 'session'");
  const hash = (body as Record<string, unknown>)[field];
  if (typeof hash !== 'string' || !SHA256_HEX.test(hash)) throw invalid(`/body/${field}`, 'must be a lower-case hex SHA-256');
  return type === 'api_key' ? { type, secretHash: hash } : { type: 'session', tokenHash: hash };
}
