import type { KeyboardEvent, PointerEvent } from 'react';
import { boxAfterKey, clampToPage, FIELD_KINDS, fieldName, type Box, type DraftField, type PageSize } from './model.ts';
import type { DragMode } from './useFieldDrag.ts';

/** The id of the one element that says how to move a field with the keyboard (every field is described by it). */
export const FIELD_KEYS_HELP_ID = 'tpl-field-keys';

interface PlacedFieldProps {
  field: DraftField & Box;
  page: PageSize;
  colour: string;
  selected: boolean;
  /** The API's details about this field from the last refused save. */
  problems: string[];
  onSelect: () => void;
  /** A pointer pressed on the field (move) or on its corner (resize): the editor follows it (useFieldDrag). */
  onDragStart: (event: PointerEvent<HTMLElement>, mode: DragMode) => void;
  /** A keyboard move or resize on its page. */
  onChange: (box: Box) => void;
  /** PageUp (-1) or PageDown (+1): to the page before or after, where the editor keeps it in view and focused. */
  onMovePage: (by: -1 | 1) => void;
  onRemove: () => void;
}

const percent = (value: number, of: number) => `${(value / of) * 100}%`;
const PAGE_KEYS: Record<string, -1 | 1> = { PageUp: -1, PageDown: 1 };

/**
 * A field placed on a page: moved by dragging it (onto another page too), resized by dragging its corner, and with
 * the keyboard once focused (arrows move by 1 point, Shift by 10, Alt/Option resizes, PageUp/PageDown move it to the
 * page before or after, Delete removes). Its box is laid out in percent of the page, so it fits any rendered width.
 */
export function PlacedField({ field, page, colour, selected, problems, onSelect, onDragStart, onChange, onMovePage, onRemove }: PlacedFieldProps) {
  const errorId = `tpl-field-error-${field.id}`;

  function startDrag(event: PointerEvent<HTMLElement>, mode: DragMode) {
    if (event.button !== 0) return;
    (event.currentTarget.closest('.tpl-field') as HTMLElement | null)?.focus({ preventScroll: true });
    onSelect();
    onDragStart(event, mode);
  }

  function onKeyDown(event: KeyboardEvent<HTMLElement>) {
    if (event.key === 'Delete' || event.key === 'Backspace') {
      event.preventDefault();
      onRemove();
      return;
    }
    const by = PAGE_KEYS[event.key];
    if (by) {
      event.preventDefault();
      onMovePage(by);
      return;
    }
    const next = boxAfterKey(field, event.key, event);
    if (!next) return;
    event.preventDefault();
    onChange(clampToPage(next, page));
    // A field moved by the keyboard stays in view (clear of the sticky toolbar: its scroll-margin).
    const element = event.currentTarget;
    requestAnimationFrame(() => element.scrollIntoView({ block: 'nearest', inline: 'nearest' }));
  }

  const invalid = problems.length > 0;
  return (
    <div
      role="button"
      tabIndex={0}
      aria-label={fieldName(field)}
      aria-pressed={selected}
      aria-describedby={invalid ? `${errorId} ${FIELD_KEYS_HELP_ID}` : FIELD_KEYS_HELP_ID}
      className={`tpl-field${selected ? ' tpl-field-selected' : ''}${invalid ? ' tpl-field-invalid' : ''}`}
      data-field-id={field.id}
      style={{ left: percent(field.x, page.width), top: percent(field.y, page.height), width: percent(field.width, page.width), height: percent(field.height, page.height), borderColor: colour, color: colour }}
      onFocus={onSelect}
      onKeyDown={onKeyDown}
      onPointerDown={(event) => startDrag(event, 'move')}
    >
      <span className="tpl-field-label" aria-hidden="true">
        {FIELD_KINDS[field.type].label}
        {field.required ? ' *' : ''}
      </span>
      <span className="tpl-field-resize" aria-hidden="true" onPointerDown={(event) => startDrag(event, 'resize')} />
      {invalid && (
        <span id={errorId} className="tpl-field-problem">
          {problems.join(' ')}
        </span>
      )}
    </div>
  );
}
