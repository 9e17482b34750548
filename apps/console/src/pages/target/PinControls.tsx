import { useState } from 'react';
import { Button, Form } from 'react-aria-components';
import { BusyButton, DialogButton, Field, FormError, useAction } from '@sigil/web-ui';
import { useSession } from '../../app/session.tsx';
import { unwrap } from '../../api/rest.ts';

/** Pins a backup (retention never deletes it) until a moment or forever, with a reason for the audit log. */
export function PinButton({ backupId }: { backupId: string }) {
  const { rest } = useSession();
  const [expires, setExpires] = useState('');
  const [reason, setReason] = useState('');
  const { busy, error, run } = useAction();
  return (
    <DialogButton label="Pin" title={`Pin backup ${backupId}`}>
      {(close) => (
        <Form
          onSubmit={(e) => {
            e.preventDefault();
            run(() => unwrap(rest.POST('/backups/{id}/pin', { params: { path: { id: backupId } }, body: { expires, reason } })))
              .then(close)
              .catch(() => undefined);
          }}
        >
          <p>Retention keeps a pinned backup whatever its rules say.</p>
          <Field label="Until" description="A duration such as 30d, a date such as 2027-01-01, or empty to pin it forever." value={expires} onChange={setExpires} error={error} pointer="/body/expires" />
          <Field label="Reason" value={reason} onChange={setReason} error={error} pointer="/body/reason" />
          <FormError error={error} fields={['/body/expires', '/body/reason']} />
          <div className="dialog-actions">
            <Button className="button" slot="close">
              Cancel
            </Button>
            <BusyButton type="submit" className="button button-primary" busy={busy}>
              Pin backup
            </BusyButton>
          </div>
        </Form>
      )}
    </DialogButton>
  );
}

export function UnpinButton({ backupId }: { backupId: string }) {
  const { rest } = useSession();
  const { busy, error, run } = useAction();
  return (
    <DialogButton label="Unpin" title={`Unpin backup ${backupId}`}>
      {(close) => (
        <>
          <p>Retention's rules decide about it again: it may expire at the next pass.</p>
          <FormError error={error} />
          <div className="dialog-actions">
            <Button className="button" slot="close">
              Cancel
            </Button>
            <BusyButton
              className="button button-danger"
              busy={busy}
              onPress={() =>
                run(() => unwrap(rest.POST('/backups/{id}/unpin', { params: { path: { id: backupId } }, body: {} })))
                  .then(close)
                  .catch(() => undefined)
              }
            >
              Unpin backup
            </BusyButton>
          </div>
        </>
      )}
    </DialogButton>
  );
}
