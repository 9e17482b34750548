import { Button } from 'react-aria-components';
import { Field } from '@sigil/web-ui';
import { ApiError } from '../../../api/problem.ts';
import { CheckField, SelectField } from './controls.tsx';
import { FIELD_KINDS, FIELD_TYPES, fieldName, type Draft, type DraftField, type FieldType } from './model.ts';
import type { DraftEditor } from './useDraft.ts';

const POSITION = [
  { key: 'x', label: 'X (points from the left)' },
  { key: 'y', label: 'Y (points from the top)' },
  { key: 'width', label: 'Width (points)' },
  { key: 'height', label: 'Height (points)' },
] as const;

interface FieldPanelProps {
  field: DraftField;
  draft: Draft;
  editor: DraftEditor;
  onChange: (change: Partial<DraftField>) => void;
  onRemove: () => void;
  /** A file draft's pages: the position is edited, the page too. Absent in document mode, where fields stand where the body names them. */
  pageCount?: number;
  /** To another page, where it stood on its own. */
  onPage?: (page: number) => void;
}

/** The chosen field's properties (type, role, required, variable, position), each with the API's detail for it. */
export function FieldPanel({ field, draft, editor, onChange, onRemove, pageCount, onPage }: FieldPanelProps) {
  const { error, pointerOf } = editor;
  const at = (member: string) => pointerOf(field, member);
  // A problem about the field as a whole (`/body/fields/3`: off its page, not placed in the body).
  const whole = at('') === undefined ? undefined : detailExact(error, at('') as string);
  return (
    <section className="tpl-panel" aria-labelledby="tpl-field-heading">
      <h2 id="tpl-field-heading">{fieldName(field)}</h2>
      {whole && (
        <p className="tpl-error" role="alert">
          {whole}
        </p>
      )}
      <Field label="Field id" value={field.id} onChange={(id) => onChange({ id })} error={error} pointer={at('/id')} description="Letters, digits, _ and -; how the API and webhooks name this field's value." />
      <SelectField<FieldType> label="Type" value={field.type} options={FIELD_TYPES.map((t) => ({ value: t, label: FIELD_KINDS[t].label }))} onChange={(type) => onChange({ type, ...(type !== 'text' ? { variable: undefined } : {}) })} error={error} pointer={at('/type')} />
      <SelectField label="Role" value={field.role} options={draft.roles.map((r) => ({ value: r.name, label: r.name }))} onChange={(role) => onChange({ role })} error={error} pointer={at('/role')} />
      <CheckField label="Required" checked={field.required} onChange={(required) => onChange({ required })} error={error} pointer={at('/required')} />
      {field.type === 'text' && (
        <SelectField
          label="Filled from variable"
          value={field.variable ?? ''}
          options={[{ value: '', label: 'None: the signer types it' }, ...draft.variables.map((v) => ({ value: v.name, label: v.name }))]}
          onChange={(variable) => onChange({ variable: variable || undefined })}
          error={error}
          pointer={at('/variable')}
        />
      )}
      {pageCount !== undefined && (
        <fieldset className="tpl-position">
          <legend>Position</legend>
          <div className="tpl-position-page">
            <SelectField
              label="Move to page"
              value={String(field.page ?? 1)}
              options={Array.from({ length: pageCount }, (_, i) => ({ value: String(i + 1), label: `Page ${i + 1} of ${pageCount}` }))}
              onChange={(page) => onPage?.(Number(page))}
              error={error}
              pointer={at('/page')}
            />
          </div>
          {POSITION.map(({ key, label }) => (
            <Field
              key={key}
              label={label}
              type="number"
              value={String(field[key] ?? '')}
              onChange={(value) => {
                const number = Number(value);
                if (value !== '' && Number.isFinite(number)) onChange({ [key]: number });
              }}
              error={error}
              pointer={at(`/${key}`)}
            />
          ))}
        </fieldset>
      )}
      <Button className="button button-danger" onPress={onRemove}>
        Remove field
      </Button>
    </section>
  );
}

/** The detail of the error whose pointer is exactly `pointer` (not one inside it). */
function detailExact(error: unknown, pointer: string): string | undefined {
  return error instanceof ApiError ? error.problem.errors?.find((e) => e.pointer === pointer)?.detail : undefined;
}
