import { Button } from 'react-aria-components';
import { SelectField } from './controls.tsx';
import { FIELD_KINDS, FIELD_TYPES, roleColour, type DraftRole, type FieldType } from './model.ts';

/** The drag data a palette item carries: the field type (the pages accept only this). */
export const FIELD_DRAG_TYPE = 'application/x-sigil-field-type';

interface PaletteProps {
  roles: readonly DraftRole[];
  role: string;
  onRole: (role: string) => void;
  type: FieldType;
  onType: (type: FieldType) => void;
  pageCount: number;
  page: number;
  onPage: (page: number) => void;
  onPlace: () => void;
}

/**
 * The field types: drag one onto a page, or (keyboard) choose it, a role and a page, and "Place field" puts it at the
 * page's centre. New fields take the chosen role, shown in its colour.
 */
export function Palette({ roles, role, onRole, type, onType, pageCount, page, onPage, onPlace }: PaletteProps) {
  return (
    <section className="tpl-palette" aria-labelledby="tpl-palette-heading">
      <h2 id="tpl-palette-heading">Add fields</h2>
      <SelectField label="Role of new fields" value={role} options={roles.map((r) => ({ value: r.name, label: r.name }))} onChange={onRole} />
      <p className="tpl-role-swatch">
        <span className="tpl-swatch" style={{ background: roleColour(roles, role) }} aria-hidden="true" /> New fields belong to {role}.
      </p>
      <p className="muted" id="tpl-palette-help">
        Drag a field type onto a page, or choose one and press Place field.
      </p>
      <div className="tpl-palette-items" role="group" aria-label="Field types" aria-describedby="tpl-palette-help">
        {FIELD_TYPES.map((kind) => (
          <button
            key={kind}
            type="button"
            className="tpl-palette-item"
            draggable
            aria-pressed={type === kind}
            data-field-type={kind}
            onClick={() => onType(kind)}
            onDragStart={(event) => {
              event.dataTransfer.setData(FIELD_DRAG_TYPE, kind);
              event.dataTransfer.effectAllowed = 'copy';
              onType(kind);
            }}
          >
            {FIELD_KINDS[kind].label} field
          </button>
        ))}
      </div>
      <div className="tpl-place">
        <SelectField label="Place on page" value={String(page)} options={Array.from({ length: pageCount }, (_, i) => ({ value: String(i + 1), label: `Page ${i + 1}` }))} onChange={(value) => onPage(Number(value))} />
        <Button className="button" onPress={onPlace}>
          Place field
        </Button>
      </div>
    </section>
  );
}
