/**
 * The processor's API objects, the fields the local processor fills: shaped like the real API's (same names, same id
 * prefixes, `object` naming the kind), so the official SDK and code reading its types take them as they are.
 */

export type Metadata = Record<string, string>;

export interface Product {
  id: string;
  object: 'product';
  active: boolean;
  created: number;
  description: string | null;
  livemode: false;
  metadata: Metadata;
  name: string;
  type: 'service';
  /** What one unit is called on pages ("envelope"). */
  unit_label: string | null;
  updated: number;
}

export interface Meter {
  id: string;
  object: 'billing.meter';
  created: number;
  customer_mapping: { event_payload_key: string; type: 'by_id' };
  default_aggregation: { formula: 'sum' };
  display_name: string;
  event_name: string;
  event_time_window: null;
  livemode: false;
  status: 'active';
  status_transitions: { deactivated_at: null };
  updated: number;
  value_settings: { event_payload_key: string };
}

export interface PriceTier {
  flat_amount: null;
  flat_amount_decimal: null;
  unit_amount: number;
  unit_amount_decimal: string;
  up_to: number | null;
}

export interface Price {
  id: string;
  object: 'price';
  active: boolean;
  billing_scheme: 'per_unit' | 'tiered';
  created: number;
  currency: 'usd';
  livemode: false;
  lookup_key: string | null;
  metadata: Metadata;
  nickname: string | null;
  product: string;
  recurring: { interval: 'month'; interval_count: 1; meter: string | null; trial_period_days: null; usage_type: 'licensed' | 'metered' };
  tax_behavior: 'unspecified';
  tiers?: PriceTier[];
  tiers_mode: 'graduated' | null;
  transform_quantity: null;
  type: 'recurring';
  unit_amount: number | null;
  unit_amount_decimal: string | null;
}

export interface Customer {
  id: string;
  object: 'customer';
  balance: 0;
  created: number;
  currency: 'usd' | null;
  default_source: null;
  delinquent: false;
  description: string | null;
  email: string | null;
  invoice_settings: { custom_fields: null; default_payment_method: string | null; footer: null; rendering_options: null };
  livemode: false;
  metadata: Metadata;
  name: string | null;
}

export interface Card {
  brand: 'visa';
  checks: { address_line1_check: null; address_postal_code_check: null; cvc_check: 'pass' };
  country: 'US';
  display_brand: 'visa';
  exp_month: number;
  exp_year: number;
  fingerprint: string;
  funding: 'credit';
  last4: string;
  networks: { available: ['visa']; preferred: null };
  wallet: null;
}

export interface PaymentMethod {
  id: string;
  object: 'payment_method';
  allow_redisplay: 'unspecified';
  billing_details: { address: null; email: null; name: string | null; phone: null };
  card: Card;
  created: number;
  customer: string | null;
  livemode: false;
  metadata: Metadata;
  type: 'card';
}

export interface CheckoutSession {
  id: string;
  object: 'checkout.session';
  amount_subtotal: number;
  amount_total: number;
  cancel_url: string | null;
  client_reference_id: string | null;
  created: number;
  currency: 'usd';
  customer: string;
  expires_at: number;
  livemode: false;
  metadata: Metadata;
  mode: 'subscription';
  payment_status: 'paid' | 'unpaid';
  status: 'complete' | 'expired' | 'open';
  subscription: string | null;
  success_url: string;
  url: string | null;
}

export interface SubscriptionItem {
  id: string;
  object: 'subscription_item';
  billing_thresholds: null;
  created: number;
  current_period_end: number;
  current_period_start: number;
  discounts: [];
  metadata: Metadata;
  price: Price;
  /** Licensed prices only: a metered price's quantity is what its meter counts. */
  quantity?: number;
  subscription: string;
  tax_rates: [];
}

export type SubscriptionStatus = 'active' | 'canceled';

export interface Subscription {
  id: string;
  object: 'subscription';
  billing_cycle_anchor: number;
  cancel_at: number | null;
  cancel_at_period_end: boolean;
  canceled_at: number | null;
  collection_method: 'charge_automatically';
  created: number;
  currency: 'usd';
  customer: string;
  default_payment_method: string | null;
  description: string | null;
  discounts: [];
  ended_at: number | null;
  items: { object: 'list'; data: SubscriptionItem[]; has_more: false; total_count: number; url: string };
  latest_invoice: null;
  livemode: false;
  metadata: Metadata;
  pending_update: null;
  schedule: null;
  start_date: number;
  status: SubscriptionStatus;
  trial_end: null;
  trial_start: null;
}

export interface PortalSession {
  id: string;
  object: 'billing_portal.session';
  configuration: string;
  created: number;
  customer: string;
  flow: null;
  livemode: false;
  locale: null;
  on_behalf_of: null;
  return_url: string | null;
  url: string;
}

export interface MeterEvent {
  object: 'billing.meter_event';
  created: number;
  event_name: string;
  identifier: string;
  livemode: false;
  payload: Record<string, string>;
  timestamp: number;
}

export interface MeterEventSummary {
  id: string;
  object: 'billing.meter_event_summary';
  aggregated_value: number;
  end_time: number;
  livemode: false;
  meter: string;
  start_time: number;
}

/** What a webhook carries: `data.object` is the object as it stands after the change. */
export interface ProcessorEventObject {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: object; previous_attributes?: Record<string, unknown> };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

export type StoredObject = Product | Meter | Price | Customer | PaymentMethod | CheckoutSession | Subscription | PortalSession;

/** A list answer, as every list endpoint of the API shapes it. */
export interface ApiList<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  url: string;
}

export const list = <T>(data: T[], url: string, hasMore = false): ApiList<T> => ({ object: 'list', data, has_more: hasMore, url });
