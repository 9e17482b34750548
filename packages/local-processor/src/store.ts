/**
 * The local processor's memory: every API object by id (one map, so `expand` can follow any id), the seeded catalog,
 * the meter events, and what a checkout session was created with (the real API keeps those off the session object).
 */
import { randomBase62 } from '@sigil/proto/random';
import { noSuch } from './api-errors.ts';
import type { MeterEvent, Meter, Price, Product, StoredObject, Subscription } from './objects.ts';
import { METER_SEEDS, PRICE_SEEDS, PRODUCT_SEEDS, type PriceSeed } from './seed.ts';

/** Ids as the real API spells them: a prefix per kind and 24 base62 characters. */
export const newObjectId = (prefix: string): string => `${prefix}_${randomBase62(24)}`;

type Kind = StoredObject['object'];
type ObjectOf<K extends Kind> = Extract<StoredObject, { object: K }>;

/** The nouns of the API's "No such …" messages. */
const NOUNS: Record<Kind, string> = {
  product: 'product',
  'billing.meter': 'billing meter',
  price: 'price',
  customer: 'customer',
  payment_method: 'PaymentMethod',
  'checkout.session': 'checkout.session',
  subscription: 'subscription',
  'billing_portal.session': 'billing portal session',
};

export interface CheckoutRequest {
  lineItems: Array<{ price: string; quantity?: number }>;
  subscriptionMetadata: Record<string, string>;
  /** `subscription_data[billing_cycle_anchor]`: when the first period ends (unix seconds); none: a month after payment. */
  billingCycleAnchor?: number;
}

export type Store = ReturnType<typeof createStore>;

export function createStore(clock: () => Date) {
  const objects = new Map<string, StoredObject>();
  const checkoutRequests = new Map<string, CheckoutRequest>();
  const meterEvents = new Map<string, MeterEvent>();
  const now = (): number => Math.floor(clock().getTime() / 1000);

  function put<T extends StoredObject>(object: T): T {
    objects.set(object.id, object);
    return object;
  }

  /** The object of that kind, or the API's 404 (400 naming `param` when a parameter referenced it). */
  function get<K extends Kind>(kind: K, id: string, param?: string): ObjectOf<K> {
    const object = objects.get(id);
    if (!object || object.object !== kind) throw noSuch(NOUNS[kind], id, param);
    return object as ObjectOf<K>;
  }

  function all<K extends Kind>(kind: K): Array<ObjectOf<K>> {
    return [...objects.values()].filter((object): object is ObjectOf<K> => object.object === kind);
  }

  seedCatalog(now(), put);

  return {
    now,
    put,
    get,
    all,
    find: (id: string): StoredObject | undefined => objects.get(id),
    checkoutRequest(sessionId: string): CheckoutRequest {
      const request = checkoutRequests.get(sessionId);
      if (!request) throw noSuch('checkout.session', sessionId);
      return request;
    },
    rememberCheckoutRequest: (sessionId: string, request: CheckoutRequest): void => void checkoutRequests.set(sessionId, request),
    meterEvents,
    priceByLookupKey: (lookupKey: string): Price | undefined => all('price').find((price) => price.lookup_key === lookupKey),
    meterByEventName: (eventName: string): Meter | undefined => all('billing.meter').find((meter) => meter.event_name === eventName),
    /** The customer's subscription a portal shows: the newest one not canceled, else the newest. */
    currentSubscription(customerId: string): Subscription | undefined {
      const mine = all('subscription')
        .filter((subscription) => subscription.customer === customerId)
        .sort((a, b) => b.created - a.created);
      return mine.find((subscription) => subscription.status !== 'canceled') ?? mine[0];
    },
  };
}

function seedCatalog(created: number, put: <T extends StoredObject>(object: T) => T): void {
  const meters = new Map(
    METER_SEEDS.map((seed) => [
      seed.eventName,
      put<Meter>({
        id: newObjectId('mtr'),
        object: 'billing.meter',
        created,
        customer_mapping: { event_payload_key: 'stripe_customer_id', type: 'by_id' },
        default_aggregation: { formula: 'sum' },
        display_name: seed.displayName,
        event_name: seed.eventName,
        event_time_window: null,
        livemode: false,
        status: 'active',
        status_transitions: { deactivated_at: null },
        updated: created,
        value_settings: { event_payload_key: 'value' },
      }),
    ]),
  );
  const products = new Map(
    PRODUCT_SEEDS.map((seed) => [
      seed.key,
      put<Product>({ id: newObjectId('prod'), object: 'product', active: true, created, description: seed.description, livemode: false, metadata: {}, name: seed.name, type: 'service', unit_label: seed.unitLabel, updated: created }),
    ]),
  );
  for (const seed of PRICE_SEEDS) put(priceFromSeed(seed, created, products.get(seed.productKey)!.id, seed.meter ? meters.get(seed.meter)!.id : null));
}

function priceFromSeed(seed: PriceSeed, created: number, productId: string, meterId: string | null): Price {
  const tiered = seed.tiers !== undefined;
  return {
    id: newObjectId('price'),
    object: 'price',
    active: true,
    billing_scheme: tiered ? 'tiered' : 'per_unit',
    created,
    currency: 'usd',
    livemode: false,
    lookup_key: seed.lookupKey,
    metadata: {},
    nickname: seed.nickname,
    product: productId,
    recurring: { interval: 'month', interval_count: 1, meter: meterId, trial_period_days: null, usage_type: seed.usage },
    tax_behavior: 'unspecified',
    ...(tiered
      ? { tiers: seed.tiers!.map((tier) => ({ flat_amount: null, flat_amount_decimal: null, unit_amount: tier.unitAmount, unit_amount_decimal: String(tier.unitAmount), up_to: tier.upTo })) }
      : {}),
    tiers_mode: tiered ? 'graduated' : null,
    transform_quantity: null,
    type: 'recurring',
    unit_amount: tiered ? null : seed.unitAmount!,
    unit_amount_decimal: tiered ? null : String(seed.unitAmount),
  };
}
