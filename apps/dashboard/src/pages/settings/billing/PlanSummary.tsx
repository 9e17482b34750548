import type { Billing } from './query.ts';
import { cardWords, dayWords, envelopes, formatPrice, periodWords, statusWords, utcDay } from './format.ts';

/** When the period ends, in the words its plan gives it: Free's usage resets, a subscription renews or ends. */
function periodEndWords(billing: Billing): string {
  if (billing.plan === 'free') return 'Usage resets on';
  return billing.cancelAtPeriodEnd ? 'Ends on' : 'Renews on';
}

/** The plan the organization is on: its price, what it includes, the period and the card on file. */
export function PlanSummary({ billing }: { billing: Billing }) {
  const offer = billing.plans.find((plan) => plan.current);
  const included = billing.entitlements.includedEnvelopes;
  return (
    <section className="panel billing-card" aria-labelledby="billing-plan">
      <h2 id="billing-plan" className="billing-eyebrow">
        Current plan
      </h2>
      <div className="billing-plan-line">
        <p className="billing-plan-name">{billing.planName}</p>
        <span className={`badge billing-status billing-status-${billing.status}`}>{statusWords(billing.status)}</span>
      </div>
      <p className="billing-price">
        <span className="billing-amount">{formatPrice(offer?.monthlyBase ?? 0)}</span> <span className="muted">per month</span>
      </p>
      <p className="billing-plan-terms">
        {envelopes(included)} included each period.{' '}
        {offer && (billing.entitlements.overageAllowed ? `Beyond that, ${offer.beyondIncluded}.` : 'Beyond that, sending pauses until you add a card or upgrade.')}
      </p>
      <dl className="details billing-facts">
        <dt>Billing period</dt>
        <dd>{periodWords(billing.currentPeriodStart, billing.currentPeriodEnd)} (UTC)</dd>
        <dt>{periodEndWords(billing)}</dt>
        <dd>{dayWords(utcDay(billing.currentPeriodEnd), { year: true })}</dd>
        <dt>Payment method</dt>
        <dd>{billing.paymentMethod ? <span className="billing-card-on-file">{cardWords(billing.paymentMethod)}</span> : billing.hasPaymentMethod ? 'A card is on file' : <span className="muted">No card on file</span>}</dd>
      </dl>
      {billing.cancelAtPeriodEnd && (
        <p className="alert alert-warning billing-note">
          Your subscription is canceled: {billing.planName} ends on {dayWords(utcDay(billing.currentPeriodEnd), { year: true })}, and the organization returns to Free.
        </p>
      )}
      {(billing.status === 'past_due' || billing.status === 'incomplete') && (
        <p className="alert alert-error billing-note">The last payment did not go through. Update your card under “Manage payment and invoices” to keep your plan.</p>
      )}
    </section>
  );
}
