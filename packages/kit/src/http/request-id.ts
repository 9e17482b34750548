import type { RequestHandler } from 'express';
import { randomBase62 } from '../ids.ts';

export const REQUEST_ID_HEADER = 'x-request-id';
const CALLER_REQUEST_ID = /^[A-Za-z0-9._-]{8,128}$/;

/** Keeps a caller's well-formed id, replaces anything else with a fresh `req_` id. */
export function normalizeRequestId(value: unknown): string {
  return typeof value === 'string' && CALLER_REQUEST_ID.test(value) ? value : `req_${randomBase62(24)}`;
}

export const requestIdMiddleware: RequestHandler = (req, res, next) => {
  const requestId = normalizeRequestId(req.headers[REQUEST_ID_HEADER]);
  req.headers[REQUEST_ID_HEADER] = requestId;
  res.locals.requestId = requestId;
  res.setHeader(REQUEST_ID_HEADER, requestId);
  next();
};
