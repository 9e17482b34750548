import { useState } from 'react';
import { Button } from 'react-aria-components';
import { BusyButton, DialogButton, FormError, useAction } from '@sigil/web-ui';
import { useCheckout } from './checkout.ts';
import type { Billing, PlanOffer } from './query.ts';
import { cardWords, envelopes, formatPrice, planAction, type PlanAction } from './format.ts';

/** The plans on offer (the catalog, cheapest first), each with its price, what it includes and how to move to it. */
export function PlanPicker({ billing, onSwitched }: { billing: Billing; onSwitched: (plan: string) => void }) {
  return (
    <section id="plans" className="billing-plans" aria-labelledby="billing-plans" tabIndex={-1}>
      <h2 id="billing-plans">Plans</h2>
      <p className="muted billing-plans-intro">Per workspace, never per seat. Prices in US dollars a month; envelopes count when they complete, in live mode.</p>
      <ul className="billing-plan-grid">
        {billing.plans.map((offer) => (
          <PlanCard key={offer.id} offer={offer} billing={billing} action={planAction(billing.plans, offer)} onSwitched={onSwitched} />
        ))}
      </ul>
    </section>
  );
}

function PlanCard({ offer, billing, action, onSwitched }: { offer: PlanOffer; billing: Billing; action: PlanAction | undefined; onSwitched: (plan: string) => void }) {
  return (
    <li className={offer.current ? 'billing-plan-card billing-plan-current' : 'billing-plan-card'}>
      <h3>{offer.name}</h3>
      <p className="billing-price">
        <span className="billing-amount">{formatPrice(offer.monthlyBase)}</span> <span className="muted">/ month</span>
      </p>
      <ul className="billing-plan-points">
        <li>{envelopes(offer.includedEnvelopes)} included</li>
        <li>Beyond that: {offer.beyondIncluded}</li>
      </ul>
      <div className="billing-plan-action">
        {offer.current ? (
          <p className="billing-current-plan">
            <span aria-hidden="true">✓ </span>Current plan
          </p>
        ) : action === undefined ? (
          <p className="muted small">To return to Free, cancel your subscription under “Manage payment and invoices”.</p>
        ) : billing.plan === 'free' ? (
          <CheckoutButton plan={offer.id} label={action.label} primary={action.kind === 'change' && offer.id === 'team'} />
        ) : (
          <SwitchPlanButton offer={offer} billing={billing} label={action.label} onSwitched={onSwitched} />
        )}
      </div>
    </li>
  );
}

/**
 * From Free: the processor's hosted checkout takes the card (a first subscription, or a card for Pay-as-you-go). The
 * button keeps saying so while the browser leaves; a refusal shows the API's words under it.
 */
function CheckoutButton({ plan, label, primary }: { plan: string; label: string; primary: boolean }) {
  const checkout = useCheckout();
  const action = useAction();
  const [leaving, setLeaving] = useState(false);
  return (
    <>
      <BusyButton
        className={primary ? 'button button-primary' : 'button'}
        busy={action.busy || leaving}
        busyLabel="Opening checkout…"
        onPress={async () => {
          const outcome = await action.run(() => checkout(plan)).catch(() => undefined);
          if (outcome === 'redirected') setLeaving(true);
        }}
      >
        {label}
      </BusyButton>
      <FormError error={action.error} />
    </>
  );
}

/**
 * With a subscription, a switch happens at once on the card on file: a dialog says what changes before it does, and
 * shows the API's refusal (the plan you are on, say) beside its button.
 */
function SwitchPlanButton({ offer, billing, label, onSwitched }: { offer: PlanOffer; billing: Billing; label: string; onSwitched: (plan: string) => void }) {
  const checkout = useCheckout();
  const action = useAction();
  const card = billing.paymentMethod ? cardWords(billing.paymentMethod) : 'your card on file';
  return (
    <DialogButton label={label} title={`Switch to ${offer.name}?`} variant={offer.monthlyBase > 0 && label.startsWith('Upgrade') ? 'button button-primary' : 'button'}>
      {(close) => (
        <>
          <p>
            Your subscription changes from {billing.planName} to {offer.name} at once: {formatPrice(offer.monthlyBase)} a month with {envelopes(offer.includedEnvelopes)} included, then {offer.beyondIncluded}.
          </p>
          <p className="muted">Charged to {card}.</p>
          <FormError error={action.error} />
          <div className="dialog-actions">
            <Button className="button" slot="close">
              Cancel
            </Button>
            <BusyButton
              className="button button-primary"
              busy={action.busy}
              busyLabel="Switching…"
              onPress={async () => {
                const outcome = await action.run(() => checkout(offer.id)).catch(() => undefined);
                if (outcome !== 'switched') return;
                close();
                onSwitched(offer.id);
              }}
            >
              {`Switch to ${offer.name}`}
            </BusyButton>
          </div>
        </>
      )}
    </DialogButton>
  );
}
