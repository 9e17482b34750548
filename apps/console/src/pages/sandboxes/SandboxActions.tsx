import { useState } from 'react';
import { Button, Form } from 'react-aria-components';
import { useNavigate } from 'react-router';
import { ApiError, BusyButton, ConfirmButton, DialogButton, Field, FormError, useAction } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { LIVING_PHASES, type Sandbox } from './detail-query.ts';

/** The restorer's actions on one sandbox; `onDone` gets the API's message (an extension that was capped says so). */
export function SandboxActions({ sandbox, onDone }: { sandbox: Pick<Sandbox, 'name' | 'phase'>; onDone: (message: string) => void }) {
  const living = LIVING_PHASES.includes(sandbox.phase);
  return (
    <>
      {living && (
        <DialogButton label="Extend" title="Extend the sandbox">
          {(close) => <ExtendForm name={sandbox.name} close={close} onDone={onDone} />}
        </DialogButton>
      )}
      {living && (
        <DialogButton label="Reset" title="Reset the sandbox?">
          {(close) => <ResetForm name={sandbox.name} close={close} onDone={onDone} />}
        </DialogButton>
      )}
      {sandbox.phase !== 'Deleting' && <DeleteButton name={sandbox.name} />}
    </>
  );
}

/**
 * The refusals that are about the duration (400 a bad one, 422 one that adds nothing, 409 a sandbox that no longer
 * lives), put under the "Extend by" field; anything else (403, 404) stays a form error.
 */
function besideField(error: unknown, pointer: string): unknown {
  if (!(error instanceof ApiError) || ![400, 409, 422].includes(error.problem.status)) return error;
  return new ApiError({ ...error.problem, errors: [{ pointer, detail: error.problem.detail ?? error.problem.title }] });
}

const reasonBody = (reason: string) => (reason.trim() ? { reason: reason.trim() } : {});

function ExtendForm({ name, close, onDone }: { name: string; close: () => void; onDone: (message: string) => void }) {
  const { rest } = useSession();
  const extend = useAction();
  const [by, setBy] = useState('2h');
  const [reason, setReason] = useState('');
  const error = besideField(extend.error, '/body/by');
  return (
    <Form
      onSubmit={async (event) => {
        event.preventDefault();
        const body = { by: by.trim(), ...reasonBody(reason) };
        const answer = await extend.run(() => unwrap(rest.POST('/sandboxes/{name}/extend', { params: { path: { name } }, body }))).catch(() => undefined);
        if (!answer) return;
        onDone(answer.message);
        close();
      }}
    >
      <Field
        autoFocus
        label="Extend by"
        value={by}
        onChange={setBy}
        isRequired
        error={error}
        pointer="/body/by"
        description="A duration such as 2h, 30m or 1d. It never reaches past the policy’s longest lifetime from now."
      />
      <Field label="Reason" value={reason} onChange={setReason} description="Optional; recorded in the audit log." />
      <FormError error={error} fields={['/body/by']} />
      <div className="dialog-actions">
        <Button className="button" slot="close">
          Cancel
        </Button>
        <BusyButton type="submit" className="button button-primary" busy={extend.busy} busyLabel="Extending…">
          Extend expiry
        </BusyButton>
      </div>
    </Form>
  );
}

function ResetForm({ name, close, onDone }: { name: string; close: () => void; onDone: (message: string) => void }) {
  const { rest } = useSession();
  const reset = useAction();
  const [reason, setReason] = useState('');
  return (
    <Form
      onSubmit={async (event) => {
        event.preventDefault();
        const answer = await reset.run(() => unwrap(rest.POST('/sandboxes/{name}/reset', { params: { path: { name } }, body: reasonBody(reason) }))).catch(() => undefined);
        if (!answer) return;
        onDone(answer.message);
        close();
      }}
    >
      <p>
        The sandbox’s server is recreated empty and the same backup (or moment) is restored into it again: whatever was written since is gone. Its name, credentials and expiry stay. Only a Ready
        sandbox can be reset.
      </p>
      <Field label="Reason" value={reason} onChange={setReason} description="Optional; recorded in the audit log." />
      <FormError error={reset.error} />
      <div className="dialog-actions">
        <Button className="button" slot="close">
          Cancel
        </Button>
        <BusyButton type="submit" className="button button-danger" busy={reset.busy} busyLabel="Resetting…">
          Reset sandbox
        </BusyButton>
      </div>
    </Form>
  );
}

/** Deleting ends the sandbox now and goes back to the list, which says so. */
function DeleteButton({ name }: { name: string }) {
  const { rest } = useSession();
  const navigate = useNavigate();
  const remove = useAction();
  return (
    <ConfirmButton
      label="Delete"
      title="Delete the sandbox?"
      description={<p>Its server stops and its data are wiped now. This cannot be undone; the backup it came from stays.</p>}
      confirmLabel="Delete sandbox"
      error={<FormError error={remove.error} />}
      onConfirm={async () => {
        const answer = await remove.run(() => unwrap(rest.DELETE('/sandboxes/{name}', { params: { path: { name } } })));
        navigate('/sandboxes', { state: { notice: answer.message } });
      }}
    />
  );
}
