import { useState } from 'react';
import { ApiError, BusyButton, Field, FormError, useAction } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { atParam, type Moment } from './moment.ts';
import { placeRefusal, pointerOf, REQUEST_FIELDS, type RequestField } from './refusal.ts';
import { MODE_ACTION, restoreCallOf, type DestinationChoice } from './request.ts';

/** What the API answered a start: the Restore, or for a sandbox the Sandbox, with its console page. */
export interface Started {
  kind: 'Restore' | 'Sandbox';
  namespace: string;
  name: string;
  message: string;
}

export interface StartStepProps {
  targetRef: string;
  moment: Moment;
  destination: DestinationChoice;
  tables: readonly string[] | 'all';
  /** The fields the page shows now (the chosen mode's): a refusal about another stays above the button. */
  shownFields: readonly RequestField[];
  /** The refusal of the last start, placed beside its field; shown by the steps that own those fields. */
  refusal: unknown;
  onRefusal(refusal: unknown): void;
  onShowMomentProblem(): void;
  onStarted(started: Started): void;
}

/**
 * Step 6: the reason (for the audit log) and the button, "Open sandbox" or "Start restore". What the API refuses
 * goes beside the field it is about (refusal.ts) and the keyboard focus follows it there; what the wizard knows is
 * not a request yet (a moment that is no moment, no table ticked) is said without asking.
 */
export function StartStep({ targetRef, moment, destination, tables, shownFields, refusal, onRefusal, onShowMomentProblem, onStarted }: StartStepProps) {
  const { rest } = useSession();
  const [reason, setReason] = useState('');
  const action = useAction();
  const at = atParam(moment);

  const start = async () => {
    if (at === undefined) {
      onShowMomentProblem();
      focusField('at');
      return;
    }
    if (tables !== 'all' && tables.length === 0 && destination.mode !== 'download') {
      onRefusal(localProblem('tables', 'Tick at least one table, or All tables.'));
      focusField('tables');
      return;
    }
    onRefusal(undefined);
    const call = restoreCallOf({ target: targetRef, at, destination, tables, reason });
    try {
      const answer = await action.run(() => unwrap(call.path === '/sandboxes' ? rest.POST(call.path, { body: call.body }) : rest.POST(call.path, { body: call.body })));
      onStarted({ kind: call.path === '/sandboxes' ? 'Sandbox' : 'Restore', namespace: answer.namespace ?? '', name: answer.name ?? '', message: answer.message });
    } catch (error) {
      const placed = placedError(error, MODE_ACTION[destination.mode], shownFields);
      onRefusal(placed);
      const field = placed instanceof ApiError ? REQUEST_FIELDS.find((f) => placed.fieldError(pointerOf(f)) !== undefined) : undefined;
      if (field) focusField(field);
    }
  };

  return (
    <>
      <div data-rst-field="reason">
        <Field label="Reason" value={reason} onChange={setReason} error={refusal} pointer={pointerOf('reason')} description="Optional; recorded with the restore and in the audit log." />
      </div>
      <FormError error={refusal} fields={shownFields.map(pointerOf)} />
      <BusyButton className={destination.mode === 'in-place' ? 'button button-danger' : 'button button-primary'} busy={action.busy} busyLabel="Starting…" onPress={start}>
        {destination.mode === 'sandbox' ? 'Open sandbox' : destination.mode === 'in-place' ? 'Start restore in place' : 'Start restore'}
      </BusyButton>
    </>
  );
}

/** An ApiError whose problem names the field, so the field shows it (Field, SelectField) and FormError does not. */
function placedError(error: unknown, what: string, shownFields: readonly RequestField[]): unknown {
  if (!(error instanceof ApiError)) return error;
  const placed = placeRefusal(error.problem.status, error.problem.detail ?? error.problem.title, what);
  if (!placed.field || !shownFields.includes(placed.field)) return new ApiError({ ...error.problem, detail: placed.detail });
  return new ApiError({ ...error.problem, detail: placed.detail, errors: [{ pointer: pointerOf(placed.field), detail: placed.detail }] });
}

function localProblem(field: RequestField, detail: string): ApiError {
  return new ApiError({ title: 'Not yet', status: 0, detail, errors: [{ pointer: pointerOf(field), detail }] });
}

/** Brings the keyboard focus to a field's input (or its first control): where the problem is said. */
function focusField(field: RequestField): void {
  requestAnimationFrame(() => {
    const slot = document.querySelector<HTMLElement>(`[data-rst-field="${field}"]`);
    slot?.querySelector<HTMLElement>('input:not([type=hidden]), textarea, button')?.focus();
    slot?.scrollIntoView({ block: 'center' });
  });
}
