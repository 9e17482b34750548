import type { Billing } from './query.ts';
import { envelopes, formatCount, periodWords, usedShare } from './format.ts';

const ADD_ONS = [
  { key: 'smsOtp', words: 'SMS verification codes' },
  { key: 'idCheck', words: 'ID verifications' },
  { key: 'qesSignature', words: 'EU qualified signatures' },
] as const;

/** What is left of the included envelopes, or what goes beyond them, in the plan's terms. */
function remainderWords(billing: Billing, beyond: string | undefined): string {
  const { completedEnvelopes, included, overage } = billing.usage;
  if (overage > 0) return billing.entitlements.overageAllowed ? `${envelopes(overage)} beyond the included ones, billed at ${beyond ?? 'the plan’s price'}.` : `${envelopes(overage)} beyond the included ones (already sent when sending paused).`;
  const left = included - completedEnvelopes;
  return billing.entitlements.overageAllowed ? `${formatCount(left)} included left this period, then ${beyond ?? 'the plan’s price'}.` : `${formatCount(left)} left before sending pauses.`;
}

/** This period's completed live envelopes against the plan's included ones, and the add-ons used. */
export function UsageSummary({ billing }: { billing: Billing }) {
  const { usage } = billing;
  const beyond = billing.plans.find((plan) => plan.current)?.beyondIncluded;
  const share = usedShare(usage.completedEnvelopes, usage.included);
  // Red only where the limit stops sending (Free); with a card, going beyond is billed, not blocked.
  const state = billing.entitlements.overageAllowed ? 'ok' : usage.completedEnvelopes >= usage.included ? 'full' : share >= 80 ? 'high' : 'ok';
  return (
    <section className="panel billing-card" aria-labelledby="billing-usage">
      <div className="billing-card-head">
        <h2 id="billing-usage" className="billing-eyebrow">
          Usage this period
        </h2>
        <p className="muted small">{periodWords(usage.periodStart, usage.periodEnd)}</p>
      </div>
      <p className="billing-usage-count">
        <span className="billing-amount">{formatCount(usage.completedEnvelopes)}</span> <span className="muted">of {formatCount(usage.included)} included completed envelopes</span>
      </p>
      <div
        className={`billing-meter billing-meter-${state}`}
        role="meter"
        aria-label="Included envelopes used"
        aria-valuemin={0}
        aria-valuemax={Math.max(usage.included, 1)}
        aria-valuenow={Math.min(usage.completedEnvelopes, Math.max(usage.included, 1))}
        aria-valuetext={`${formatCount(usage.completedEnvelopes)} of ${formatCount(usage.included)} (${share}%)`}
      >
        <div className="billing-meter-fill" style={{ width: `${share}%` }} />
      </div>
      <p className="billing-remainder">{remainderWords(billing, beyond)}</p>
      {billing.plan === 'free' ? (
        <p className="muted small billing-addons-note">Add-ons (SMS verification codes, ID verifications, EU qualified signatures) come with a card on file or a paid plan.</p>
      ) : (
        <>
          <h3 className="billing-subheading">Add-ons used</h3>
          <dl className="billing-addons">
            {ADD_ONS.map(({ key, words }) => (
              <div key={key}>
                <dt>{words}</dt>
                <dd>{formatCount(usage.addOns[key])}</dd>
              </div>
            ))}
          </dl>
        </>
      )}
      <p className="muted small billing-footnote">Envelopes count when they complete, in live mode only. Test mode is free and never counted.</p>
    </section>
  );
}
