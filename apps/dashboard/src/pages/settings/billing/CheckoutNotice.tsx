import { useEffect, useRef } from 'react';
import type { CheckoutReturn } from './useCheckoutReturn.ts';

/**
 * The message of a return from checkout or of a switch, in a live region that is always there, so it is announced.
 * A switch's button goes once its plan is the current one: the focus, lost with it, comes here.
 */
export function CheckoutNotice({ state, planName }: { state: CheckoutReturn | undefined; planName: string | undefined }) {
  const region = useRef<HTMLDivElement>(null);
  const updated = state?.phase === 'updated';
  useEffect(() => {
    if (updated && (document.activeElement === null || document.activeElement === document.body)) region.current?.focus();
  }, [updated]);
  return (
    <div role="status" className="billing-notice" ref={region} tabIndex={-1}>
      {state && <NoticeWords state={state} planName={planName} />}
    </div>
  );
}

function NoticeWords({ state, planName }: { state: CheckoutReturn; planName: string | undefined }) {
  switch (state.phase) {
    case 'waiting':
      return <p className="alert alert-info">{state.source === 'switch' ? 'Your plan is switching — it updates in a few seconds.' : 'Payment received — your plan updates in a few seconds.'}</p>;
    case 'updated':
      return <p className="alert alert-success">You’re on {planName ?? 'your new plan'} now.</p>;
    case 'slow':
      return (
        <p className="alert alert-warning">
          {state.source === 'switch' ? 'The switch was accepted' : 'Your payment went through'}, but the plan has not changed here yet. It can take a minute: this page reads it again
          when you come back to it.
        </p>
      );
    case 'canceled':
      return <p className="alert alert-info">Checkout canceled: nothing was charged and your plan is unchanged.</p>;
  }
}
