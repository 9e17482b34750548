import type { ReactNode } from 'react';
import { FieldError, Input, Label, Text, TextArea, TextField, type TextFieldProps } from 'react-aria-components';
import { ApiError } from '../errors.ts';

export interface FieldProps extends Omit<TextFieldProps, 'children' | 'isInvalid'> {
  label: string;
  description?: ReactNode;
  /** The API refusal of the last submit: its detail for `pointer` is shown under the field. */
  error?: unknown;
  /** The request part this field fills, e.g. `/body/email`. */
  pointer?: string;
  multiline?: boolean;
  rows?: number;
  placeholder?: string;
}

/** A labelled text field that shows the API's problem `detail` for its pointer (and announces it: aria-invalid). */
export function Field({ label, description, error, pointer, multiline, rows, placeholder, ...props }: FieldProps) {
  const detail = pointer && error instanceof ApiError ? error.fieldError(pointer) : undefined;
  return (
    <TextField {...props} isInvalid={detail !== undefined} className="field" validationBehavior="aria">
      <Label>{label}</Label>
      {multiline ? <TextArea rows={rows ?? 4} placeholder={placeholder} /> : <Input placeholder={placeholder} />}
      {description && <Text slot="description">{description}</Text>}
      <FieldError>{detail}</FieldError>
    </TextField>
  );
}

/**
 * The problem of a refused action, when no field shows it (or for anything else that failed): a live region, so a
 * screen reader hears it.
 */
export function FormError({ error, fields = [] }: { error: unknown; fields?: readonly string[] }) {
  if (!error) return null;
  if (error instanceof ApiError) {
    const shown = fields.some((pointer) => error.fieldError(pointer) !== undefined);
    const other = (error.problem.errors ?? []).filter((e) => !fields.some((f) => e.pointer === f || e.pointer.startsWith(f + '/')));
    if (shown && other.length === 0) return null;
    return (
      <div role="alert" className="alert alert-error">
        <strong>{error.problem.title}.</strong> {error.problem.detail}
        {other.length > 0 && (
          <ul>
            {other.map((e) => (
              <li key={e.pointer}>
                <code>{e.pointer}</code>: {e.detail}
              </li>
            ))}
          </ul>
        )}
      </div>
    );
  }
  return (
    <div role="alert" className="alert alert-error">
      {error instanceof Error ? error.message : String(error)}
    </div>
  );
}
