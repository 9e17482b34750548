import { useState } from 'react';
import { ConfirmButton, Field, FormError, useAction } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';

/** Voids an envelope in progress, with the reason recipients are told (a confirmation first: it cannot be undone). */
export function VoidEnvelope({ envelopeId, onVoided }: { envelopeId: string; onVoided: () => void }) {
  const { rest } = useSession();
  const [reason, setReason] = useState('');
  const action = useAction();
  return (
    <ConfirmButton
      label="Void envelope"
      title="Void this envelope?"
      confirmLabel="Void envelope"
      description={
        <>
          <p>Nobody can sign it any more. Recipients who were sent it are told, with your reason.</p>
          <Field label="Reason" multiline rows={3} value={reason} onChange={setReason} maxLength={1000} error={action.error} pointer="/body/reason" description="Shown to recipients and recorded in the audit trail." />
        </>
      }
      error={<FormError error={action.error} fields={['/body/reason']} />}
      onConfirm={async () => {
        await action.run(() => unwrap(rest.POST('/v1/envelopes/{id}/void', { params: { path: { id: envelopeId } }, body: reason.trim() ? { reason: reason.trim() } : {} })));
        onVoided();
      }}
    />
  );
}
