/**
 * The payment processor as the billing service sees it. One adapter implements it (`stripe-processor.ts`, on the
 * official `stripe` SDK); the local stack points that same adapter at the local processor (`@sigil/local-processor`)
 * by host and port, so nothing here knows which one answers.
 */
import type { PlanId } from '../plans/catalog.ts';

/** The paid plans a subscription can be on (Free has none). */
export type PaidPlanId = Exclude<PlanId, 'free'>;

/** The processor's words for a subscription's state (api-decisions: Billing). */
export type SubscriptionStatus = 'active' | 'trialing' | 'past_due' | 'canceled' | 'incomplete' | 'incomplete_expired' | 'unpaid' | 'paused';

export interface PaymentMethodSummary {
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
}

/** A subscription as the processor holds it, read into our words. */
export interface ProcessorSubscription {
  id: string;
  customerId: string;
  /** Our organization, from the subscription's metadata (`organization`); undefined when it has none. */
  organizationId: string | undefined;
  plan: PaidPlanId;
  status: SubscriptionStatus;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  cancelAtPeriodEnd: boolean;
  /** The card the subscription is charged to; null when none is set. */
  paymentMethod: PaymentMethodSummary | null;
}

/** A processor webhook event, verified, in our words. Events of other types come as `kind: 'ignored'`. */
export type ProcessorEvent =
  | { kind: 'checkout.completed'; id: string; created: Date; organizationId: string | undefined; customerId: string; subscriptionId: string | undefined }
  | { kind: 'subscription'; id: string; created: Date; deleted: boolean; subscription: ProcessorSubscription }
  | { kind: 'ignored'; id: string; created: Date; type: string };

/** One metered quantity reported to the processor (overage envelopes, add-ons), deduplicated by `identifier`. */
export interface MeterReport {
  customerId: string;
  /** `envelopes` for completed envelopes beyond the included ones, else the add-on. */
  meter: 'envelopes' | 'smsOtp' | 'idCheck' | 'qesSignature';
  quantity: number;
  /** Unique per reported thing (e.g. `env_...`): the processor drops a repeat. */
  identifier: string;
  at: Date;
}

export interface Processor {
  /** Creates the organization's customer (metadata `organization`) and answers its id. */
  createCustomer(input: { organizationId: string; email?: string; name?: string }): Promise<string>;
  /** A hosted checkout that starts a subscription to `plan` for the customer; answers the page's URL. */
  createCheckout(input: { customerId: string; organizationId: string; plan: PaidPlanId; successUrl: string; cancelUrl: string }): Promise<{ id: string; url: string }>;
  /** Moves an existing subscription to another paid plan at once (prorated by the processor); answers its new state. */
  switchPlan(subscriptionId: string, plan: PaidPlanId): Promise<ProcessorSubscription>;
  /** The customer portal (cards, invoices, cancel); answers its URL. */
  createPortal(input: { customerId: string; returnUrl: string }): Promise<{ url: string }>;
  /** The subscription's current state. */
  retrieveSubscription(subscriptionId: string): Promise<ProcessorSubscription>;
  /** Reports metered usage (the processor's meter events). */
  reportUsage(report: MeterReport): Promise<void>;
  /** Verifies `Processor-Signature` over the raw body (400 `AppError` when it fails) and reads the event. */
  parseWebhook(rawBody: Buffer, signatureHeader: string | undefined, now: Date): Promise<ProcessorEvent>;
}
