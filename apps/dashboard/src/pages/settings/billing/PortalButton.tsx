import { useState } from 'react';
import { BusyButton, FormError, useAction } from '@sigil/web-ui';
import { usePortal } from './checkout.ts';

/** The processor's customer portal (cards, invoices, cancelling), opened in this tab; it comes back to this page. */
export function PortalButton() {
  const openPortal = usePortal();
  const action = useAction();
  const [leaving, setLeaving] = useState(false);
  return (
    <div className="billing-portal">
      <BusyButton
        className="button"
        busy={action.busy || leaving}
        busyLabel="Opening the portal…"
        onPress={async () => {
          const opened = await action.run(openPortal).then(
            () => true,
            () => false,
          );
          setLeaving(opened);
        }}
      >
        Manage payment and invoices
      </BusyButton>
      <FormError error={action.error} />
    </div>
  );
}
