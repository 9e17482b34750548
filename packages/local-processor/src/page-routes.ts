/**
 * The hosted pages' routes: `/checkout/:id` (a checkout session's `url`) and `/portal/:id` (a portal session's). Forms
 * post back here; a change ends in a 303 so a reload never repeats it.
 */
import express, { type Response, type Router } from 'express';
import { ApiError } from './api-errors.ts';
import { checkCard, type CardForm } from './cards.ts';
import { completeCheckout, currentCheckoutSession } from './checkout.ts';
import type { ProcessorContext } from './context.ts';
import { attachCard } from './customers.ts';
import { optionalString, parseForm } from './form.ts';
import type { PaymentMethod, PortalSession, Subscription } from './objects.ts';
import { contentSecurityPolicy, renderPage, type Page } from './page-layout.ts';
import { cardUpdatePage, checkoutPage, closedCheckoutPage, notFoundPage, portalPage, type PricedItem } from './pages.ts';
import { longDate } from './price-text.ts';
import { replacePaymentMethod, setCancelAtPeriodEnd } from './subscriptions.ts';

const NOTICES: Record<string, (subscription: Subscription | undefined) => string> = {
  canceled: (subscription) => (subscription?.cancel_at ? `Your subscription will end on ${longDate(subscription.cancel_at)}.` : 'Your subscription was canceled.'),
  renewed: () => 'Your subscription will renew.',
  card: () => 'Your card was updated.',
};

export function pageRouter(context: ProcessorContext): Router {
  const router = express.Router();
  const { store } = context;
  router.use(express.text({ type: 'application/x-www-form-urlencoded', limit: '16kb' }));

  router.get('/checkout/:id', (req, res) => {
    const session = currentCheckoutSession(context, req.params.id);
    send(res, session.status === 'open' ? checkoutPage(session, pricedItems(context, store.checkoutRequest(session.id).lineItems.map((line) => line.price))) : closedCheckoutPage(session));
  });

  router.post('/checkout/:id', (req, res) => {
    const session = currentCheckoutSession(context, req.params.id);
    if (session.status !== 'open') return send(res, closedCheckoutPage(session), 409);
    const form = cardForm(req.body);
    const check = checkCard(form, context.clock());
    if (!check.ok) {
      const items = pricedItems(context, store.checkoutRequest(session.id).lineItems.map((line) => line.price));
      return send(res, checkoutPage(session, items, check, form), check.status);
    }
    res.redirect(303, completeCheckout(context, session.id, check.card));
  });

  router.get('/portal/:id', (req, res) => {
    const session = store.get('billing_portal.session', req.params.id);
    const subscription = store.currentSubscription(session.customer);
    const notice = NOTICES[String(req.query.done ?? '')]?.(subscription);
    send(res, portalPage({ session, subscription, items: subscriptionItems(context, subscription), paymentMethod: paymentMethodOf(context, session, subscription), notice }));
  });

  router.post('/portal/:id/cancel', (req, res) => changeSubscription(res, req.params.id, 'canceled', (id) => setCancelAtPeriodEnd(context, id, true)));
  router.post('/portal/:id/renew', (req, res) => changeSubscription(res, req.params.id, 'renewed', (id) => setCancelAtPeriodEnd(context, id, false)));

  router.get('/portal/:id/card', (req, res) => send(res, cardUpdatePage(store.get('billing_portal.session', req.params.id))));

  router.post('/portal/:id/card', (req, res) => {
    const session = store.get('billing_portal.session', req.params.id);
    const form = cardForm(req.body);
    const check = checkCard(form, context.clock());
    if (!check.ok) return send(res, cardUpdatePage(session, check, form), check.status);
    const paymentMethod = attachCard(context, session.customer, check.card);
    const subscription = store.currentSubscription(session.customer);
    if (subscription && subscription.status !== 'canceled') replacePaymentMethod(context, subscription.id, paymentMethod.id);
    res.redirect(303, `/portal/${session.id}?done=card`);
  });

  function changeSubscription(res: Response, portalId: string, done: string, change: (subscriptionId: string) => void): void {
    const session = store.get('billing_portal.session', portalId);
    const subscription = store.currentSubscription(session.customer);
    if (subscription) change(subscription.id);
    res.redirect(303, `/portal/${session.id}?done=${done}`);
  }

  router.use((req, res) => send(res, notFoundPage(`Nothing is served at ${req.path}.`), 404));
  router.use(((error, _req, res, next) => {
    if (error instanceof ApiError && error.status === 404) return send(res, notFoundPage('This checkout or billing session does not exist. Start again from Sigil.'), 404);
    next(error);
  }) as express.ErrorRequestHandler);
  return router;
}

function send(res: Response, page: Page, status = 200): void {
  res.status(status).set({ 'content-security-policy': contentSecurityPolicy(page), 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).type('html').send(renderPage(page));
}

function cardForm(body: unknown): CardForm {
  const params = parseForm(typeof body === 'string' ? body : '');
  const read = (name: string) => optionalString(params, name) ?? '';
  return { card: read('card'), expiry: read('expiry'), cvc: read('cvc'), name: read('name') };
}

function pricedItems(context: ProcessorContext, priceIds: string[]): PricedItem[] {
  return priceIds.map((id) => {
    const price = context.store.get('price', id);
    const product = context.store.find(price.product);
    return { price, product: product?.object === 'product' ? product : undefined };
  });
}

function subscriptionItems(context: ProcessorContext, subscription: Subscription | undefined): PricedItem[] {
  return subscription ? pricedItems(context, subscription.items.data.map((item) => item.price.id)) : [];
}

/** The card the portal shows: the subscription's own, else the customer's default. */
function paymentMethodOf(context: ProcessorContext, session: PortalSession, subscription: Subscription | undefined): PaymentMethod | undefined {
  const id = subscription?.default_payment_method ?? context.store.get('customer', session.customer).invoice_settings.default_payment_method;
  return id ? context.store.get('payment_method', id) : undefined;
}
