import type { Billing } from './query.ts';
import { envelopes } from './format.ts';

/** Free's included envelopes are used: new live envelopes are refused (402) until a card is added or the plan upgraded. */
export function SendingBlocked({ billing }: { billing: Billing }) {
  if (!billing.sendingBlocked) return null;
  return (
    <div role="alert" className="alert alert-error billing-blocked">
      <strong>Sending is paused.</strong> This period’s {envelopes(billing.usage.included)} on {billing.planName} are used, so new live envelopes are refused until the period
      ends. Envelopes already sent still complete. <a href="#plans">Add a card or upgrade</a> to send again now.
    </div>
  );
}
