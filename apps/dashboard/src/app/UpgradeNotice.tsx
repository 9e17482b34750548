import { Link } from 'react-aria-components';
import type { PlanRefusal } from '../api/plan.ts';

/**
 * The plan's refusal in the API's words (after `lead`, in bold, when the page knows more), with the way to the billing
 * page: a notice, not an error (nothing broke).
 */
export function UpgradeNotice({ refusal, lead }: { refusal: PlanRefusal; lead?: string }) {
  return (
    <div role="alert" className="alert alert-upgrade">
      {lead && <strong>{lead} </strong>}
      {refusal.detail}{' '}
      <Link href={refusal.href} className="upgrade-link">
        See plans and upgrade
      </Link>
    </div>
  );
}
