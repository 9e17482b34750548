import { useCallback } from 'react';
import { useHref } from 'react-router';
import { unwrap } from '../../../api/rest.ts';
import { useSession } from '../../../app/session.tsx';

/** The query the processor's checkout comes back with: `?checkout=success&plan=team`, or `?checkout=canceled`. */
export const CHECKOUT_PARAM = 'checkout';
export const PLAN_PARAM = 'plan';

/** Where the hosted checkout sends the person back: this page, saying how it went and which plan they chose. */
export function checkoutReturnUrls(billingPage: URL, plan: string): { successUrl: string; cancelUrl: string } {
  const success = new URL(billingPage);
  success.search = new URLSearchParams({ [CHECKOUT_PARAM]: 'success', [PLAN_PARAM]: plan }).toString();
  const cancel = new URL(billingPage);
  cancel.search = new URLSearchParams({ [CHECKOUT_PARAM]: 'canceled' }).toString();
  return { successUrl: success.toString(), cancelUrl: cancel.toString() };
}

/** What a checkout did: the browser left for the hosted checkout page, or the subscription was switched in place. */
export type CheckoutOutcome = 'redirected' | 'switched';

/**
 * Starts a checkout for `plan` (`POST /v1/billing/checkout`): opens the processor's hosted page when it answers with
 * one (a first subscription, or a card for Pay-as-you-go), or reports that an existing subscription was switched at
 * once (`url` null). A refusal throws the API's problem (an ApiError) for the control to show.
 */
export function useCheckout(): (plan: string) => Promise<CheckoutOutcome> {
  const { rest } = useSession();
  const billingHref = useHref('/settings/billing');
  return useCallback(
    async (plan: string) => {
      const urls = checkoutReturnUrls(new URL(billingHref, window.location.origin), plan);
      const answer = await unwrap(rest.POST('/v1/billing/checkout', { body: { plan, ...urls } }));
      if (!answer.url) return 'switched';
      window.location.assign(answer.url);
      return 'redirected';
    },
    [rest, billingHref],
  );
}

/** Opens the processor's customer portal (cards, invoices, cancelling), which comes back to this page. */
export function usePortal(): () => Promise<void> {
  const { rest } = useSession();
  const billingHref = useHref('/settings/billing');
  return useCallback(async () => {
    const returnUrl = new URL(billingHref, window.location.origin).toString();
    const session = await unwrap(rest.POST('/v1/billing/portal', { body: { returnUrl } }));
    window.location.assign(session.url);
  }, [rest, billingHref]);
}
