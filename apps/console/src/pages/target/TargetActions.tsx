import { useState } from 'react';
import { Button, Form, Link } from 'react-aria-components';
import { BusyButton, DialogButton, Field, FormError, useAction } from '@sigil/web-ui';
import { useSession } from '../../app/session.tsx';
import { unwrap } from '../../api/rest.ts';

type ReasonAction = 'backup-now' | 'suspend' | 'resume';

const WORDS: Record<ReasonAction, { label: string; title: string; confirm: string; explain: string }> = {
  'backup-now': { label: 'Back up now', title: 'Run a full backup now', confirm: 'Start backup', explain: 'A full backup starts at once (the load guard may postpone it while the database is busy).' },
  suspend: { label: 'Suspend', title: 'Suspend backups', confirm: 'Suspend', explain: 'No scheduled backup runs until it is resumed. The change log keeps what it has.' },
  resume: { label: 'Resume', title: 'Resume backups', confirm: 'Resume', explain: 'Scheduled backups run again.' },
};

/** What the caller's role may do to the target: run, suspend or resume (operator), restore (restorer). */
export function TargetActions({ target }: { target: { namespace: string; name: string; suspended: boolean } }) {
  const { can } = useSession();
  const ref = encodeURIComponent(`${target.namespace}/${target.name}`);
  return (
    <>
      {can('restorer') && (
        <>
          <Link className="button button-primary" href={`/restore?target=${ref}`}>
            Restore…
          </Link>
          <Link className="button" href={`/restore?target=${ref}&mode=sandbox`}>
            Open a sandbox…
          </Link>
        </>
      )}
      {can('operator') && (
        <>
          <ReasonButton target={target} action="backup-now" />
          <ReasonButton target={target} action={target.suspended ? 'resume' : 'suspend'} />
        </>
      )}
    </>
  );
}

/** One operator action with an optional reason (kept in the audit log), in a dialog. */
function ReasonButton({ target, action }: { target: { namespace: string; name: string }; action: ReasonAction }) {
  const { rest } = useSession();
  const words = WORDS[action];
  const [reason, setReason] = useState('');
  const [done, setDone] = useState<string>();
  const { busy, error, run } = useAction();
  const submit = (close: () => void) =>
    run(async () => {
      const params = { path: { ns: target.namespace, name: target.name } };
      const body = reason ? { reason } : {};
      const result =
        action === 'backup-now'
          ? await unwrap(rest.POST('/targets/{ns}/{name}/backup-now', { params, body }))
          : action === 'suspend'
            ? await unwrap(rest.POST('/targets/{ns}/{name}/suspend', { params, body }))
            : await unwrap(rest.POST('/targets/{ns}/{name}/resume', { params, body }));
      setDone(result.message);
      setReason('');
      close();
    }).catch(() => undefined);
  return (
    <>
      <DialogButton label={words.label} title={words.title}>
        {(close) => (
          <Form
            onSubmit={(e) => {
              e.preventDefault();
              void submit(close);
            }}
          >
            <p>{words.explain}</p>
            <Field label="Reason (optional, kept in the audit log)" value={reason} onChange={setReason} maxLength={1000} error={error} pointer="/body/reason" />
            <FormError error={error} fields={['/body/reason']} />
            <div className="dialog-actions">
              <Button className="button" slot="close">
                Cancel
              </Button>
              <BusyButton type="submit" className="button button-primary" busy={busy}>
                {words.confirm}
              </BusyButton>
            </div>
          </Form>
        )}
      </DialogButton>
      {done && (
        <p role="status" className="action-done">
          {done}
        </p>
      )}
    </>
  );
}
