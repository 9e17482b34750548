import type { ReactNode } from 'react';
import { Button, FieldError, Label, ListBox, ListBoxItem, Popover, Select, SelectValue, Text } from 'react-aria-components';
import { ApiError } from '../errors.ts';

export interface SelectOption<K extends string> {
  id: K;
  /** What the closed field and screen readers say. */
  name: string;
  /** A second line in the open list (what choosing it means). */
  detail?: ReactNode;
}

/**
 * A labelled single choice (react-aria's Select: a button and a listbox, typeahead and arrows) that shows the API's
 * refusal for `pointer` under it. `hideLabel` keeps the label for screen readers only (in a table row).
 */
export function SelectField<K extends string>({ label, options, value, onChange, error, pointer, description, isDisabled, hideLabel }: { label: string; options: readonly SelectOption<K>[]; value: K; onChange: (value: K) => void; error?: unknown; pointer?: string; description?: ReactNode; isDisabled?: boolean; hideLabel?: boolean }) {
  const detail = pointer && error instanceof ApiError ? error.fieldError(pointer) : undefined;
  return (
    <Select
      className="field select-field"
      selectedKey={value}
      onSelectionChange={(key) => {
        const chosen = options.find((option) => option.id === key);
        if (chosen) onChange(chosen.id);
      }}
      isInvalid={detail !== undefined}
      isDisabled={isDisabled}
      validationBehavior="aria"
    >
      <Label className={hideLabel ? 'visually-hidden' : 'react-aria-Label'}>{label}</Label>
      <Button className="select-button">
        <SelectValue>{({ selectedText }) => selectedText}</SelectValue>
        <span aria-hidden="true">▾</span>
      </Button>
      {description && <Text slot="description">{description}</Text>}
      <FieldError>{detail}</FieldError>
      <Popover className="select-popover">
        <ListBox className="select-list">
          {options.map((option) => (
            <ListBoxItem key={option.id} id={option.id} className="select-option" textValue={option.name}>
              <span className="option-name">{option.name}</span>
              {option.detail && <span className="option-detail">{option.detail}</span>}
            </ListBoxItem>
          ))}
        </ListBox>
      </Popover>
    </Select>
  );
}
