/**
 * The REST API under `/v1`: the subset the billing adapter calls (and a few reads tests use), with the real API's
 * bearer authentication, form-encoded parameters, `expand`, `Idempotency-Key` replays and error bodies.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Request, type RequestHandler, type Router } from 'express';
import { ApiError, invalidParam } from './api-errors.ts';
import { createCheckoutSession, currentCheckoutSession } from './checkout.ts';
import type { ProcessorContext } from './context.ts';
import { createCustomer, createPortalSession } from './customers.ts';
import { present } from './expand.ts';
import { optionalBoolean, optionalInteger, optionalString, parseForm, stringList, type Params } from './form.ts';
import { meterEventSummaries, recordMeterEvent } from './meters.ts';
import { list } from './objects.ts';
import { cancelSubscription, updateSubscription } from './subscriptions.ts';

/** Every answer of the API is a 200 with the object (a create too); refusals are thrown `ApiError`s. */
type Handler = (params: Params, id: string) => object;

export function apiRouter(context: ProcessorContext, secretKey: string | undefined): Router {
  const router = express.Router();
  const { store } = context;
  const replays = new Map<string, object>();
  router.use(authenticate(secretKey));
  router.use(express.text({ type: 'application/x-www-form-urlencoded', limit: '256kb' }));

  const handle = (handler: Handler): RequestHandler => (req, res) => {
    const params = req.method === 'POST' ? parseForm(typeof req.body === 'string' ? req.body : '') : parseForm(queryOf(req));
    const replayKey = req.method === 'POST' && req.get('idempotency-key') ? `${req.path} ${req.get('idempotency-key')}` : undefined;
    const replay = replayKey ? replays.get(replayKey) : undefined;
    if (replay) return void res.set('Idempotent-Replayed', 'true').json(replay);
    const body = present(handler(params, String(req.params.id ?? '')), stringList(params, 'expand'), store.find);
    if (replayKey) replays.set(replayKey, body);
    res.json(body);
  };

  router.post('/customers', handle((params) => createCustomer(context, params)));
  router.get('/customers/:id', handle((_params, id) => store.get('customer', id)));
  router.get('/prices', handle((params) => listPrices(context, params)));
  router.get('/prices/:id', handle((_params, id) => store.get('price', id)));
  router.get('/products/:id', handle((_params, id) => store.get('product', id)));
  router.post('/checkout/sessions', handle((params) => createCheckoutSession(context, params)));
  router.get('/checkout/sessions/:id', handle((_params, id) => currentCheckoutSession(context, id)));
  router.get('/subscriptions/:id', handle((_params, id) => store.get('subscription', id)));
  router.post('/subscriptions/:id', handle((params, id) => updateSubscription(context, id, params)));
  router.delete('/subscriptions/:id', handle((_params, id) => cancelSubscription(context, id)));
  router.get('/payment_methods/:id', handle((_params, id) => store.get('payment_method', id)));
  router.post('/billing_portal/sessions', handle((params) => createPortalSession(context, params)));
  router.post('/billing/meter_events', handle((params) => recordMeterEvent(context, params)));
  router.get('/billing/meters', handle(() => list(store.all('billing.meter'), '/v1/billing/meters')));
  router.get('/billing/meters/:id/event_summaries', handle((params, id) => meterEventSummaries(context, id, params)));
  router.use((req) => {
    throw new ApiError(404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${req.baseUrl}${req.path}). The local processor answers the part of the API the billing adapter uses.`);
  });
  return router;
}

function listPrices(context: ProcessorContext, params: Params): object {
  const lookupKeys = stringList(params, 'lookup_keys');
  const active = optionalBoolean(params, 'active');
  const product = optionalString(params, 'product');
  const limit = optionalInteger(params, 'limit') ?? 10;
  if (limit < 1 || limit > 100) throw invalidParam('limit', 'This value must be between 1 and 100.');
  const matching = context.store
    .all('price')
    .filter((price) => lookupKeys.length === 0 || (price.lookup_key !== null && lookupKeys.includes(price.lookup_key)))
    .filter((price) => active === undefined || price.active === active)
    .filter((price) => product === undefined || price.product === product);
  return list(matching.slice(0, limit), '/v1/prices', matching.length > limit);
}

function queryOf(req: Request): string {
  const at = req.originalUrl.indexOf('?');
  return at < 0 ? '' : req.originalUrl.slice(at + 1);
}

/** `Authorization: Bearer <secret key>`, as the SDK sends it; any key is taken when none was configured. */
function authenticate(secretKey: string | undefined): RequestHandler {
  const expected = secretKey ? createHash('sha256').update(secretKey).digest() : undefined;
  return (req, _res, next) => {
    if (!expected) return next();
    const key = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
    if (!key) throw new ApiError(401, 'invalid_request_error', "You did not provide an API key. Provide it in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').");
    if (!timingSafeEqual(createHash('sha256').update(key).digest(), expected)) throw new ApiError(401, 'invalid_request_error', `Invalid API Key provided: ${key.slice(0, 8)}****${key.slice(-4)}`, { code: 'api_key_invalid' });
    next();
  };
}
