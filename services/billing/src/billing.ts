/**
 * The billing use cases: what an organization's plan, usage and invoice are, and the ways to change the plan (checkout,
 * the portal, the processor's webhooks). Every plan change is followed by a notification that makes the services
 * drop their cached entitlements.
 */
import { AppError } from '@sigil/kit/errors';
import type { Logger } from '@sigil/kit/log';
import { applyProcessorEvent, applySubscriptionState } from './account/processor-events.ts';
import { accountState, subscriptionLive, type AccountState } from './account/state.ts';
import { keepCustomer, readAccount } from './account/store.ts';
import type { Db } from './db.ts';
import { isPlanId, monthPeriod, PLAN_IDS, PLANS, periodName, type Period } from './plans/index.ts';
import type { PaidPlanId, Processor, ProcessorEvent } from './processor/processor.ts';

import { readUsage } from './usage/read.ts';
import { billingView, entitlementsView, subscriptionView, usageView } from './views.ts';

/** Subscription states that mean it is over (the processor keeps the object, but nothing will be billed on it). */
const ENDED = new Set(['canceled', 'incomplete_expired']);

export interface BillingDeps {
  db: Db;
  processor: Processor;
  clock: () => Date;
  /** The dashboard's base address (`https://app.sigil.dev/app`): its billing page is the upgrade link. */
  dashboardUrl: string;
  /** Tells every service the organization's plan changed (their cached entitlements go). */
  notifyPlanChanged: (organizationId: string) => void;
  log: Logger;
}

export interface Caller {
  organizationId: string;
  /** The signed-in person's e-mail, for the processor's customer. */
  email?: string;
}

export type BillingService = ReturnType<typeof createBillingService>;

export function createBillingService(deps: BillingDeps) {
  const billingPage = `${deps.dashboardUrl.replace(/\/$/, '')}/settings/billing`;

  async function state(organizationId: string): Promise<AccountState> {
    return accountState(organizationId, await readAccount(deps.db, organizationId), deps.clock());
  }

  async function countsOf(organizationId: string, period: Period) {
    return readUsage(deps.db, organizationId, period, deps.clock());
  }

  /** A return address the caller gave must be on the dashboard's origin: the processor redirects people to it. */
  function returnAddress(given: string | undefined, pointer: string, fallback: string): string {
    if (given === undefined) return fallback;
    if (new URL(given).origin !== new URL(billingPage).origin) {
      throw new AppError('validation-failed', `${pointer.split('/').pop()} must be an address of the dashboard (${new URL(billingPage).origin}).`, {
        errors: [{ pointer, detail: `must be on ${new URL(billingPage).origin}` }],
      });
    }
    return given;
  }

  function paidPlan(plan: string): PaidPlanId {
    if (!isPlanId(plan)) {
      throw new AppError('validation-failed', `plan must be one of ${PLAN_IDS.filter((p) => p !== 'free').join(', ')}.`, { errors: [{ pointer: '/body/plan', detail: `is not a plan (${PLAN_IDS.join(', ')})` }] });
    }
    if (plan === 'free') {
      throw new AppError('validation-failed', 'Free needs no checkout: cancel the subscription in the billing portal to return to Free at the end of the period.', {
        errors: [{ pointer: '/body/plan', detail: 'free needs no checkout' }],
      });
    }
    return plan;
  }

  async function customerOf(caller: Caller, current: AccountState): Promise<string> {
    if (current.customerId) return current.customerId;
    const created = await deps.processor.createCustomer({ organizationId: caller.organizationId, email: caller.email });
    return keepCustomer(deps.db, caller.organizationId, created, deps.clock());
  }

  async function withCurrentState(event: Extract<ProcessorEvent, { kind: 'subscription' }>): Promise<ProcessorEvent> {
    try {
      const current = await deps.processor.retrieveSubscription(event.subscription.id);
      return { ...event, deleted: event.deleted || ENDED.has(current.status), subscription: { ...current, organizationId: current.organizationId ?? event.subscription.organizationId } };
    } catch (error) {
      // A subscription the processor no longer has: the event's own copy is all there is.
      if (error instanceof AppError && error.code === 'not-found') return event;
      throw error;
    }
  }

  return {
    billingPage,
    state,

    async overview(organizationId: string) {
      const current = await state(organizationId);
      return billingView(current, await countsOf(organizationId, current.period));
    },

    async subscription(organizationId: string) {
      const current = await state(organizationId);
      return subscriptionView(current, await countsOf(organizationId, current.period));
    },

    /** A month's usage (`YYYY-MM`): the current period when it starts in that month, else the calendar month. */
    async usage(organizationId: string, month: string | undefined) {
      const current = await state(organizationId);
      const period = month === undefined || month === periodName(current.period) ? current.period : monthPeriod(month);
      if (!period) throw new AppError('validation-failed', 'period must be a month, YYYY-MM.', { errors: [{ pointer: '/query/period', detail: 'must be YYYY-MM' }] });
      return { object: 'usage' as const, ...usageView(current, period, await countsOf(organizationId, period)) };
    },

    async entitlements(organizationId: string) {
      return entitlementsView(await state(organizationId), billingPage);
    },

    /**
     * Starts a paid plan through the processor's hosted checkout, or switches the subscription in force to another
     * plan at once (the processor prorates).
     */
    async checkout(caller: Caller, input: { plan: string; successUrl?: string; cancelUrl?: string }) {
      const plan = paidPlan(input.plan);
      const current = await state(caller.organizationId);
      if (subscriptionLive(current)) {
        if (current.plan === plan) throw new AppError('conflict', `This workspace is already on the ${PLANS[plan].name} plan.`);
        if (!current.subscriptionId) throw new AppError('internal', 'A live subscription has no id.');
        const switched = await deps.processor.switchPlan(current.subscriptionId, plan);
        await applySubscriptionState(deps.db, caller.organizationId, { ...switched, organizationId: caller.organizationId }, deps.clock());
        deps.notifyPlanChanged(caller.organizationId);
        const { object: _object, ...billing } = await this.overview(caller.organizationId);
        return { object: 'billing_checkout' as const, url: null, ...billing };
      }
      const successUrl = returnAddress(input.successUrl, '/body/successUrl', `${billingPage}?checkout=success`);
      const cancelUrl = returnAddress(input.cancelUrl, '/body/cancelUrl', `${billingPage}?checkout=canceled`);
      const customerId = await customerOf(caller, current);
      const session = await deps.processor.createCheckout({ customerId, organizationId: caller.organizationId, plan, successUrl, cancelUrl });
      return { object: 'billing_checkout' as const, url: session.url };
    },

    async portal(caller: Caller, input: { returnUrl?: string }) {
      const current = await state(caller.organizationId);
      if (!current.customerId) throw new AppError('conflict', 'This workspace has no billing account yet: add a card or choose a plan first.');
      const returnUrl = returnAddress(input.returnUrl, '/body/returnUrl', billingPage);
      const { url } = await deps.processor.createPortal({ customerId: current.customerId, returnUrl });
      return { object: 'billing_portal_session' as const, url };
    },

    /**
     * `POST /v1/billing/webhooks/processor`: verified over the raw body, applied once. A subscription event is a
     * notice that the subscription changed: its state is read from the processor as it stands now, so whatever order
     * the events arrive in (their times are whole seconds, and several changes can share one), the newest state wins.
     */
    async receiveWebhook(rawBody: Buffer | undefined, signature: string | undefined) {
      const verified = await deps.processor.parseWebhook(rawBody ?? Buffer.alloc(0), signature, deps.clock());
      const event = verified.kind === 'subscription' ? await withCurrentState(verified) : verified;
      const applied = await applyProcessorEvent(deps.db, event, deps.clock());
      if (applied.organizationId) deps.notifyPlanChanged(applied.organizationId);
      deps.log.info({ event: event.id, kind: event.kind, fresh: applied.fresh, organizationId: applied.organizationId }, 'processor event');
      return { received: true as const };
    },
  };
}
