import { useRef, type KeyboardEvent, type PointerEvent } from 'react';
import { boxAfterKey, clampToPage, FIELD_KINDS, fieldName, snapMove, snapResize, type Box, type DraftField, type PageSize } from './model.ts';

/** The id of the one element that says how to move a field with the keyboard (every field is described by it). */
export const FIELD_KEYS_HELP_ID = 'tpl-field-keys';

interface PlacedFieldProps {
  field: DraftField & Box;
  page: PageSize;
  colour: string;
  selected: boolean;
  /** The API's details about this field from the last refused save. */
  problems: string[];
  /** The boxes of the page's other fields: a moved or resized edge sticks to theirs. */
  others: readonly Box[];
  onSelect: () => void;
  onChange: (box: Box) => void;
  onRemove: () => void;
}

const percent = (value: number, of: number) => `${(value / of) * 100}%`;

/**
 * A field placed on a page: moved by dragging it, resized by dragging its corner (pointer events, snapped to the
 * grid and to the other fields' edges), and with the keyboard once focused (arrows move by 1 point, Shift by 10,
 * Alt/Option resizes, Delete removes). Its box is laid out in percent of the page, so it fits any rendered width.
 */
export function PlacedField({ field, page, colour, selected, problems, others, onSelect, onChange, onRemove }: PlacedFieldProps) {
  const drag = useRef<{ mode: 'move' | 'resize'; startX: number; startY: number; box: Box; pointsPerPixel: number }>(undefined);
  const errorId = `tpl-field-error-${field.id}`;

  function startDrag(event: PointerEvent<HTMLElement>, mode: 'move' | 'resize') {
    if (event.button !== 0) return;
    event.stopPropagation();
    event.preventDefault();
    const overlay = (event.currentTarget.closest('.tpl-page-overlay') as HTMLElement | null) ?? event.currentTarget;
    const target = event.currentTarget.closest('.tpl-field') as HTMLElement;
    target.focus();
    target.setPointerCapture(event.pointerId);
    onSelect();
    drag.current = { mode, startX: event.clientX, startY: event.clientY, box: { x: field.x, y: field.y, width: field.width, height: field.height }, pointsPerPixel: page.width / overlay.getBoundingClientRect().width };
  }

  function onPointerMove(event: PointerEvent<HTMLElement>) {
    const current = drag.current;
    if (!current) return;
    const dx = (event.clientX - current.startX) * current.pointsPerPixel;
    const dy = (event.clientY - current.startY) * current.pointsPerPixel;
    const { box } = current;
    const next = current.mode === 'move' ? snapMove({ ...box, x: box.x + dx, y: box.y + dy }, others) : snapResize({ ...box, width: box.width + dx, height: box.height + dy }, others);
    onChange(clampToPage(next, page));
  }

  function onKeyDown(event: KeyboardEvent<HTMLElement>) {
    if (event.key === 'Delete' || event.key === 'Backspace') {
      event.preventDefault();
      onRemove();
      return;
    }
    const next = boxAfterKey(field, event.key, event);
    if (!next) return;
    event.preventDefault();
    onChange(clampToPage(next, page));
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
      onPointerMove={onPointerMove}
      onPointerUp={() => (drag.current = undefined)}
      onPointerCancel={() => (drag.current = undefined)}
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
