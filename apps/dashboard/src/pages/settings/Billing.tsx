import { useCallback } from 'react';
import { useQuery } from 'urql';
import { useLive } from '../../api/live.ts';
import { useSession } from '../../app/session.tsx';
import { CheckoutNotice } from './billing/CheckoutNotice.tsx';
import { DailyChart } from './billing/DailyChart.tsx';
import { UpcomingInvoice } from './billing/InvoiceTable.tsx';
import { PlanFeatures } from './billing/PlanFeatures.tsx';
import { PlanPicker } from './billing/PlanPicker.tsx';
import { PlanSummary } from './billing/PlanSummary.tsx';
import { PortalButton } from './billing/PortalButton.tsx';
import { BillingQuery, type Billing } from './billing/query.ts';
import { SendingBlocked } from './billing/SendingBlocked.tsx';
import { UsageSummary } from './billing/UsageSummary.tsx';
import { useCheckoutReturn } from './billing/useCheckoutReturn.ts';
import { useRefreshOnReturn } from './billing/useRefreshOnReturn.ts';
import '../developers/developers.css';
import './billing/billing.css';
import { Loading, Page } from '@sigil/web-ui';

const DESCRIPTION = 'Your plan, this period’s usage and the next invoice.';

export default function BillingPage() {
  const { can, session } = useSession();
  if (!can('billing:manage')) {
    return (
      <Page title="Billing" description={DESCRIPTION}>
        <p className="alert alert-info">
          You cannot see or change billing: that needs the <code>billing:manage</code> permission, which owners hold. Your role is {session?.role}.
        </p>
      </Page>
    );
  }
  return <BillingOverview />;
}

/**
 * Billing read through GraphQL (`organization.billing`): read again when the person comes back to the page, when a
 * live envelope completes (usage moves), and every 2 s after a checkout until the new plan shows.
 */
function BillingOverview() {
  const [{ data, fetching, error }, refetch] = useQuery({ query: BillingQuery });
  const refresh = useCallback(() => refetch({ requestPolicy: 'network-only' }), [refetch]);
  const billing = data?.organization?.billing;
  const { state, expectPlan } = useCheckoutReturn(billing?.plan, refresh);
  useRefreshOnReturn(refresh);
  // Usage counts live envelopes only, whichever mode the dashboard shows.
  useLive(refresh, { mode: 'live', types: ['envelope.completed'] });
  const hasCustomer = billing !== undefined && (billing.plan !== 'free' || billing.hasPaymentMethod);
  return (
    <Page title="Billing" description={DESCRIPTION} actions={hasCustomer && <PortalButton />}>
      <CheckoutNotice state={state} planName={billing?.planName} />
      {fetching && !data && <Loading what="billing" />}
      {error && !billing && (
        <p role="alert" className="alert alert-error">
          {error.message}
        </p>
      )}
      {billing && <BillingSections billing={billing} onSwitched={expectPlan} />}
    </Page>
  );
}

function BillingSections({ billing, onSwitched }: { billing: Billing; onSwitched: (plan: string) => void }) {
  return (
    <div className="billing">
      <SendingBlocked billing={billing} />
      <div className="billing-overview">
        <PlanSummary billing={billing} />
        <UsageSummary billing={billing} />
      </div>
      <DailyChart usage={billing.usage} />
      <UpcomingInvoice billing={billing} />
      <PlanPicker billing={billing} onSwitched={onSwitched} />
      <PlanFeatures billing={billing} />
    </div>
  );
}
