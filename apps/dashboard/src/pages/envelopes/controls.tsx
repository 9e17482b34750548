import type { ReactNode } from 'react';
import { Button, FieldError, Group, Input, Label, ListBox, ListBoxItem, NumberField, Popover, Select, SelectValue, Text } from 'react-aria-components';
import { ApiError } from '../../api/problem.ts';

/** The API's problem detail for `pointer` (or a pointer inside it), when `error` is a refusal that names it. */
export function detailFor(error: unknown, pointer: string | undefined): string | undefined {
  return pointer && error instanceof ApiError ? error.fieldError(pointer) : undefined;
}

export interface Option {
  id: string;
  label: string;
}

/**
 * A labelled choice among options (react-aria Select: a button that opens a listbox; arrows, typing and Enter work),
 * showing the API's detail for its pointer like `Field` does.
 */
export function SelectField({ label, options, value, onChange, description, error, pointer, isDisabled }: { label: string; options: readonly Option[]; value: string; onChange: (id: string) => void; description?: ReactNode; error?: unknown; pointer?: string; isDisabled?: boolean }) {
  const detail = detailFor(error, pointer);
  return (
    <Select className="field env-select" value={value} onChange={(key) => key !== null && onChange(String(key))} isInvalid={detail !== undefined} validationBehavior="aria" isDisabled={isDisabled}>
      <Label>{label}</Label>
      <Button className="env-select-button">
        <SelectValue />
        <span aria-hidden="true">▾</span>
      </Button>
      {description && <Text slot="description">{description}</Text>}
      <FieldError>{detail}</FieldError>
      <Popover className="env-popover">
        <ListBox items={options}>{(option) => <ListBoxItem id={option.id}>{option.label}</ListBoxItem>}</ListBox>
      </Popover>
    </Select>
  );
}

/** A labelled whole number (arrow keys step it), with the API's detail for its pointer. */
export function NumberInput({ label, value, onChange, minValue, maxValue, description, error, pointer }: { label: string; value: number | undefined; onChange: (value: number | undefined) => void; minValue?: number; maxValue?: number; description?: ReactNode; error?: unknown; pointer?: string }) {
  const detail = detailFor(error, pointer);
  return (
    <NumberField className="field" value={value ?? Number.NaN} onChange={(n) => onChange(Number.isNaN(n) ? undefined : n)} minValue={minValue} maxValue={maxValue} step={1} formatOptions={{ maximumFractionDigits: 0, useGrouping: false }} isInvalid={detail !== undefined} validationBehavior="aria">
      <Label>{label}</Label>
      <Group>
        <Input />
      </Group>
      {description && <Text slot="description">{description}</Text>}
      <FieldError>{detail}</FieldError>
    </NumberField>
  );
}
