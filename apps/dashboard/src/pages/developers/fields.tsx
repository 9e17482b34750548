import type { ReactNode } from 'react';
import { Checkbox, CheckboxGroup, FieldError, Label, Text } from 'react-aria-components';
import { ApiError } from '../../api/problem.ts';

/** The API's `detail` for the field at `pointer` (or inside it), when the last refusal names it. */
export function detailFor(error: unknown, pointer: string): string | undefined {
  return error instanceof ApiError ? error.fieldError(pointer) : undefined;
}

export interface CheckboxOption {
  value: string;
  label: ReactNode;
}

/**
 * A group of labelled checkboxes (scopes, event types) that shows the API's problem detail for its pointer under it.
 */
export function CheckboxField({ label, description, options, value, onChange, error, pointer }: { label: string; description?: ReactNode; options: CheckboxOption[]; value: string[]; onChange: (value: string[]) => void; error: unknown; pointer: string }) {
  const detail = detailFor(error, pointer);
  return (
    <CheckboxGroup className="field checkbox-field" value={value} onChange={onChange} isInvalid={detail !== undefined} validationBehavior="aria">
      <Label>{label}</Label>
      {description && <Text slot="description">{description}</Text>}
      <div className="checkbox-list">
        {options.map((option) => (
          <Checkbox key={option.value} value={option.value} className="checkbox">
            <span className="checkbox-box" aria-hidden="true" />
            <span>{option.label}</span>
          </Checkbox>
        ))}
      </div>
      <FieldError>{detail}</FieldError>
    </CheckboxGroup>
  );
}

/** A permission or event type: its words, then its code. */
export function Worded({ words, code }: { words: string; code: string }) {
  return (
    <>
      {words} <code className="muted">{code}</code>
    </>
  );
}
