/** Checkout sessions in subscription mode: created through the API, paid on the hosted page. */
import { ApiError, invalidParam, missingParam } from './api-errors.ts';
import type { AcceptedCard } from './cards.ts';
import type { ProcessorContext } from './context.ts';
import { attachCard, createCustomer } from './customers.ts';
import { mergeMetadata, nestedParams, objectList, optionalInteger, optionalString, optionalUrl, requiredString, requiredUrl, type Params } from './form.ts';
import type { CheckoutSession } from './objects.ts';
import { newObjectId, type CheckoutRequest } from './store.ts';
import { createSubscription, lineItemInputs } from './subscriptions.ts';

/** How long an open session can be paid, as the real API's default. */
const SESSION_LIFETIME_SECONDS = 24 * 60 * 60;

export function createCheckoutSession(context: ProcessorContext, params: Params): CheckoutSession {
  const mode = requiredString(params, 'mode');
  if (mode !== 'subscription') throw invalidParam('mode', `The local processor supports mode=subscription only, not ${mode}.`);
  const successUrl = requiredUrl(params, 'success_url');
  const lineItems = lineItemInputs(context, objectList(params, 'line_items'), 'line_items');
  if (lineItems.length === 0) throw missingParam('line_items');
  const customerId = optionalString(params, 'customer');
  const customer = customerId ? context.store.get('customer', customerId, 'customer') : createCustomer(context, { email: optionalString(params, 'customer_email') });
  const id = newObjectId('cs_test');
  const created = context.store.now();
  const amount = lineItems.reduce((sum, item) => sum + (item.quantity ?? 0) * (context.store.get('price', item.price).unit_amount ?? 0), 0);
  const subscriptionData = nestedParams(params, 'subscription_data');
  const billingCycleAnchor = optionalInteger(subscriptionData, 'billing_cycle_anchor');
  if (billingCycleAnchor !== undefined && billingCycleAnchor <= created) throw invalidParam('subscription_data[billing_cycle_anchor]', 'billing_cycle_anchor must be in the future.');
  const request: CheckoutRequest = { lineItems, subscriptionMetadata: mergeMetadata({}, subscriptionData), ...(billingCycleAnchor !== undefined ? { billingCycleAnchor } : {}) };
  context.store.rememberCheckoutRequest(id, request);
  return context.store.put<CheckoutSession>({
    id,
    object: 'checkout.session',
    amount_subtotal: amount,
    amount_total: amount,
    cancel_url: optionalUrl(params, 'cancel_url') ?? null,
    client_reference_id: optionalString(params, 'client_reference_id') ?? null,
    created,
    currency: 'usd',
    customer: customer.id,
    expires_at: optionalInteger(params, 'expires_at') ?? created + SESSION_LIFETIME_SECONDS,
    livemode: false,
    metadata: mergeMetadata({}, params),
    mode: 'subscription',
    payment_status: 'unpaid',
    status: 'open',
    subscription: null,
    success_url: successUrl,
    url: `${context.baseUrl()}/checkout/${id}`,
  });
}

/** The session, expired first when its time has passed (the real API expires sessions the same way). */
export function currentCheckoutSession(context: ProcessorContext, id: string): CheckoutSession {
  const session = context.store.get('checkout.session', id);
  if (session.status === 'open' && context.store.now() >= session.expires_at) {
    session.status = 'expired';
    session.url = null;
    context.emit('checkout.session.expired', session);
  }
  return session;
}

/**
 * Pays an open session with an accepted card: the card becomes the customer's default, the subscription starts, the
 * session completes, and `checkout.session.completed` then `customer.subscription.created` go out. Answers where the
 * browser goes next.
 */
export function completeCheckout(context: ProcessorContext, sessionId: string, card: AcceptedCard): string {
  const session = currentCheckoutSession(context, sessionId);
  if (session.status !== 'open') throw new ApiError(400, 'invalid_request_error', `This checkout session is ${session.status}.`, { code: 'checkout_session_not_open' });
  const request = context.store.checkoutRequest(session.id);
  const paymentMethod = attachCard(context, session.customer, card);
  const subscription = createSubscription(context, { customer: session.customer, lineItems: request.lineItems, metadata: request.subscriptionMetadata, defaultPaymentMethod: paymentMethod.id, billingCycleAnchor: request.billingCycleAnchor });
  session.status = 'complete';
  session.payment_status = 'paid';
  session.subscription = subscription.id;
  session.url = null;
  context.emit('checkout.session.completed', session);
  context.emit('customer.subscription.created', subscription);
  return session.success_url.replaceAll('{CHECKOUT_SESSION_ID}', encodeURIComponent(session.id));
}
