import { useCallback, useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { CHECKOUT_PARAM, PLAN_PARAM } from './checkout.ts';

/** How often the page reads billing again after a checkout, and for how long, until the new plan shows. */
export const RETURN_POLL_MS = 2_000;
export const RETURN_WAIT_MS = 30_000;

/**
 * Where a change of plan stands, after the hosted checkout sent the person back or a subscription was switched in
 * place (`source`): the plan is `waiting` for the processor's webhook, has `updated`, or is `slow` (still the old plan
 * after RETURN_WAIT_MS); or the checkout was `canceled`. `plan` is the plan the person chose, when known.
 */
export type CheckoutReturn = { phase: 'waiting' | 'updated' | 'slow'; source: 'checkout' | 'switch'; plan?: string } | { phase: 'canceled' };

/** The return the page's address describes (`?checkout=success&plan=team`), if any. */
export function checkoutReturnFrom(params: URLSearchParams): CheckoutReturn | undefined {
  const outcome = params.get(CHECKOUT_PARAM);
  if (outcome === 'canceled') return { phase: 'canceled' };
  if (outcome !== 'success') return undefined;
  const plan = params.get(PLAN_PARAM);
  return plan ? { phase: 'waiting', source: 'checkout', plan } : { phase: 'waiting', source: 'checkout' };
}

/**
 * Whether billing now shows the checkout's plan: the chosen one when known, otherwise any plan other than the one the
 * page first read after coming back.
 */
export function planReached(wanted: string | undefined, firstSeen: string | undefined, plan: string): boolean {
  return wanted ? plan === wanted : firstSeen !== undefined && plan !== firstSeen;
}

/**
 * After the hosted checkout sends the person back, or `expectPlan` says a switch was made, reads billing every
 * RETURN_POLL_MS (through `refetch`) until `plan` is the new one, for at most RETURN_WAIT_MS. The address's `checkout`
 * parameters are removed at once, so a reload or a bookmark does not start the wait again.
 */
export function useCheckoutReturn(plan: string | undefined, refetch: () => void): { state: CheckoutReturn | undefined; expectPlan: (plan: string) => void } {
  const [params, setParams] = useSearchParams();
  const [state, setState] = useState(() => checkoutReturnFrom(params));
  const firstSeen = useRef<string | undefined>(undefined);
  const latestRefetch = useRef(refetch);
  latestRefetch.current = refetch;

  useEffect(() => {
    if (!params.has(CHECKOUT_PARAM)) return;
    const rest = new URLSearchParams(params);
    rest.delete(CHECKOUT_PARAM);
    rest.delete(PLAN_PARAM);
    setParams(rest, { replace: true });
  }, [params, setParams]);

  const waiting = state?.phase === 'waiting';
  useEffect(() => {
    if (!waiting) return;
    const poll = setInterval(() => latestRefetch.current(), RETURN_POLL_MS);
    const giveUp = setTimeout(() => setState((s) => (s?.phase === 'waiting' ? { ...s, phase: 'slow' } : s)), RETURN_WAIT_MS);
    return () => {
      clearInterval(poll);
      clearTimeout(giveUp);
    };
  }, [waiting]);

  useEffect(() => {
    if (plan === undefined || !state || state.phase === 'canceled' || state.phase === 'updated') return;
    firstSeen.current ??= plan;
    if (planReached(state.plan, firstSeen.current, plan)) setState({ ...state, phase: 'updated' });
  }, [plan, state]);

  const expectPlan = useCallback((wanted: string) => setState({ phase: 'waiting', source: 'switch', plan: wanted }), []);
  return { state, expectPlan };
}
