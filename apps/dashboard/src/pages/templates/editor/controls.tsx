import { useId } from 'react';
import { ApiError } from '../../../api/problem.ts';

/** The API's detail for `pointer` in a refusal (see Field in @sigil/web-ui, which text inputs use). */
export function detailFor(error: unknown, pointer: string | undefined): string | undefined {
  return pointer && error instanceof ApiError ? error.fieldError(pointer) : undefined;
}

/** A labelled native select that shows the API's problem detail for its pointer beneath it (aria-invalid, described). */
export function SelectField<T extends string>({ label, value, options, onChange, error, pointer, isDisabled }: { label: string; value: T; options: readonly { value: T; label: string }[]; onChange: (value: T) => void; error?: unknown; pointer?: string; isDisabled?: boolean }) {
  const id = useId();
  const detail = detailFor(error, pointer);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} disabled={isDisabled} aria-invalid={detail ? true : undefined} aria-describedby={detail ? `${id}-error` : undefined} onChange={(event) => onChange(event.target.value as T)}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      {detail && (
        <span id={`${id}-error`} className="tpl-error">
          {detail}
        </span>
      )}
    </div>
  );
}

/** A labelled checkbox with the API's detail for its pointer. */
export function CheckField({ label, checked, onChange, error, pointer }: { label: string; checked: boolean; onChange: (checked: boolean) => void; error?: unknown; pointer?: string }) {
  const id = useId();
  const detail = detailFor(error, pointer);
  return (
    <div className="tpl-check">
      <input id={id} type="checkbox" checked={checked} onChange={(event) => onChange(event.target.checked)} aria-invalid={detail ? true : undefined} aria-describedby={detail ? `${id}-error` : undefined} />
      <label htmlFor={id}>{label}</label>
      {detail && (
        <span id={`${id}-error`} className="tpl-error">
          {detail}
        </span>
      )}
    </div>
  );
}
