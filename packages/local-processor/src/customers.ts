/** Customers, their cards (payment methods) and portal sessions. */
import { createHash } from 'node:crypto';
import type { AcceptedCard } from './cards.ts';
import type { ProcessorContext } from './context.ts';
import { mergeMetadata, optionalString, optionalUrl, requiredString, type Params } from './form.ts';
import type { Customer, PaymentMethod, PortalSession } from './objects.ts';
import { newObjectId } from './store.ts';

export function createCustomer(context: ProcessorContext, params: Params): Customer {
  return context.store.put<Customer>({
    id: newObjectId('cus'),
    object: 'customer',
    balance: 0,
    created: context.store.now(),
    currency: null,
    default_source: null,
    delinquent: false,
    description: optionalString(params, 'description') ?? null,
    email: optionalString(params, 'email') ?? null,
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: false,
    metadata: mergeMetadata({}, params),
    name: optionalString(params, 'name') ?? null,
  });
}

/** A card entered on a hosted page: attached to the customer and made the default of its invoices. */
export function attachCard(context: ProcessorContext, customerId: string, card: AcceptedCard): PaymentMethod {
  const customer = context.store.get('customer', customerId);
  const paymentMethod = context.store.put<PaymentMethod>({
    id: newObjectId('pm'),
    object: 'payment_method',
    allow_redisplay: 'unspecified',
    billing_details: { address: null, email: null, name: card.name, phone: null },
    card: {
      brand: card.brand,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
      country: 'US',
      display_brand: card.brand,
      exp_month: card.expMonth,
      exp_year: card.expYear,
      // The same card always has the same fingerprint, as in the real API.
      fingerprint: createHash('sha256').update(`${card.brand}:${card.last4}:${card.expMonth}/${card.expYear}`).digest('base64url').slice(0, 16),
      funding: 'credit',
      last4: card.last4,
      networks: { available: ['visa'], preferred: null },
      wallet: null,
    },
    created: context.store.now(),
    customer: customer.id,
    livemode: false,
    metadata: {},
    type: 'card',
  });
  customer.invoice_settings.default_payment_method = paymentMethod.id;
  return paymentMethod;
}

export function createPortalSession(context: ProcessorContext, params: Params): PortalSession {
  const customer = context.store.get('customer', requiredString(params, 'customer'), 'customer');
  const id = newObjectId('bps');
  return context.store.put<PortalSession>({
    id,
    object: 'billing_portal.session',
    configuration: 'bpc_local_default',
    created: context.store.now(),
    customer: customer.id,
    flow: null,
    livemode: false,
    locale: null,
    on_behalf_of: null,
    return_url: optionalUrl(params, 'return_url') ?? null,
    url: `${context.baseUrl()}/portal/${id}`,
  });
}
