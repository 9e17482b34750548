import type { components } from '@sigil/proto/api/sigil';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { ReadState, useRead } from './read.tsx';
import '../developers/developers.css';
import { BusyButton, FormError, Page, useAction, When } from '@sigil/web-ui';

type Billing = components['schemas']['Billing'];

export default function BillingPage() {
  const { rest, can } = useSession();
  const read = useRead(() => unwrap(rest.GET('/v1/billing')), can('billing:manage'));
  return (
    <Page title="Billing" description="Your plan, this period's usage and your invoices.">
      <ReadState read={read} what="Billing" permission="billing:manage">
        {(billing) => <BillingOverview billing={billing} />}
      </ReadState>
    </Page>
  );
}

function BillingOverview({ billing }: { billing: Billing }) {
  const { usage, entitlements } = billing;
  return (
    <>
      {billing.sendingBlocked && (
        <p className="alert alert-error" role="alert">
          Sending new envelopes is blocked until the billing problem is solved.
        </p>
      )}
      <section aria-labelledby="plan" className="panel">
        <h2 id="plan">Plan</h2>
        <dl className="details">
          <dt>Plan</dt>
          <dd>{billing.plan}</dd>
          <dt>Status</dt>
          <dd>{billing.status}</dd>
          <dt>{billing.cancelAtPeriodEnd ? 'Ends' : 'Renews'}</dt>
          <dd>
            <When at={billing.currentPeriodEnd} />
          </dd>
          <dt>Payment method</dt>
          <dd>{billing.hasPaymentMethod ? 'On file' : 'None'}</dd>
          <dt>Envelopes included</dt>
          <dd>
            {entitlements.includedEnvelopes} a period{entitlements.overageAllowed ? ', more billed as overage' : ''}
          </dd>
        </dl>
        <PortalButton />
      </section>
      <section aria-labelledby="usage" className="panel">
        <h2 id="usage">Usage this period</h2>
        <dl className="details">
          <dt>Period</dt>
          <dd>
            <When at={usage.periodStart} /> to <When at={usage.periodEnd} />
          </dd>
          <dt>Completed envelopes (live)</dt>
          <dd>
            {usage.completedEnvelopes} of {usage.included} included
          </dd>
          <dt>Overage</dt>
          <dd>{usage.overage}</dd>
          <dt>SMS codes</dt>
          <dd>{usage.addOns.smsOtp}</dd>
          <dt>ID checks</dt>
          <dd>{usage.addOns.idCheck}</dd>
          <dt>Qualified signatures</dt>
          <dd>{usage.addOns.qesSignature}</dd>
        </dl>
      </section>
    </>
  );
}

/** The payment processor's portal (invoices, payment method, cancellation), opened in this tab. */
function PortalButton() {
  const { rest } = useSession();
  const action = useAction();
  return (
    <div className="stack">
      <div className="row">
        <BusyButton
          className="button"
          busy={action.busy}
          onPress={async () => {
            const session = await action
              .run(() => unwrap(rest.POST('/v1/billing/portal', { body: { returnUrl: window.location.href } })))
              .catch(() => undefined);
            if (session) window.location.assign(session.url);
          }}
        >
          Manage payment and invoices
        </BusyButton>
      </div>
      <FormError error={action.error} />
    </div>
  );
}
