import { Checkbox } from 'react-aria-components';
import { Field } from '@sigil/web-ui';
import { NumberInput } from './controls.tsx';
import type { SendDraft } from './sendForm.ts';

export const OPTION_POINTERS = ['/body/externalId', '/body/expiresAt', '/body/reminders'];

/** Expiry, reminders and the caller's own reference: only what CreateEnvelope accepts. */
export function SendOptions({ draft, onChange, error }: { draft: SendDraft; onChange: (next: SendDraft) => void; error: unknown }) {
  return (
    <fieldset>
      <legend>Expiry and reminders</legend>
      <div className="env-row">
        <NumberInput label="Expires after (days)" value={draft.expiresInDays} onChange={(expiresInDays) => onChange({ ...draft, expiresInDays })} minValue={1} maxValue={365} description="1 to 365 days; empty: 30 days." error={error} pointer="/body/expiresAt" />
        <Field label="External ID" value={draft.externalId} onChange={(externalId) => onChange({ ...draft, externalId })} maxLength={255} description="Your own reference, searchable in the list (optional)." error={error} pointer="/body/externalId" />
      </div>
      <Checkbox className="env-checkbox" isSelected={draft.reminders} onChange={(reminders) => onChange({ ...draft, reminders })}>
        <div className="box" aria-hidden="true" />
        Remind signers who have not signed
      </Checkbox>
      {draft.reminders && (
        <div className="env-row">
          <NumberInput label="First reminder after (hours)" value={draft.firstReminderAfterHours} onChange={(firstReminderAfterHours) => onChange({ ...draft, firstReminderAfterHours })} minValue={1} maxValue={8760} error={error} pointer="/body/reminders/firstAfterHours" />
          <NumberInput label="Then remind every (hours)" value={draft.remindEveryHours} onChange={(remindEveryHours) => onChange({ ...draft, remindEveryHours })} minValue={1} maxValue={8760} error={error} pointer="/body/reminders/everyHours" />
        </div>
      )}
    </fieldset>
  );
}
