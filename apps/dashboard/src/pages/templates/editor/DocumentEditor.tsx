import { useRef, useState, type ReactNode } from 'react';
import { Button } from 'react-aria-components';
import { detailFor, SelectField } from './controls.tsx';
import { FieldPanel } from './FieldPanel.tsx';
import type { DocumentImport } from '../upload.ts';
import { ImportDocx } from '../UploadDocument.tsx';
import { FIELD_KINDS, FIELD_TYPES, fieldName, nextFieldId, roleColour, TOKEN, withBody, type Draft, type FieldType } from './model.ts';
import { RolesAndVariables } from './RolesAndVariables.tsx';
import type { DraftEditor } from './useDraft.ts';

/** The body with its `{{...}}` tokens marked: declared fields, declared variables, and unknown ones (an error). */
function highlighted(content: string, draft: Draft): ReactNode[] {
  const parts: ReactNode[] = [];
  let last = 0;
  for (const match of content.matchAll(TOKEN)) {
    const [token, isField, name] = match;
    const index = match.index ?? 0;
    parts.push(content.slice(last, index));
    const known = isField ? draft.fields.some((f) => f.id === name) : draft.variables.some((v) => v.name === name);
    parts.push(
      <mark key={index} className={known ? (isField ? 'tpl-token-field' : 'tpl-token-variable') : 'tpl-token-unknown'}>
        {token}
      </mark>,
    );
    last = index + token.length;
  }
  // A trailing newline needs a character after it, or the overlay is one line shorter than the text area.
  parts.push(content.slice(last) + '\n');
  return parts;
}

/** Tokens the draft does not declare: said in words beside the text (the highlight is not the only signal). */
function unknownTokens(content: string, draft: Draft): string[] {
  return [...content.matchAll(TOKEN)]
    .filter(([, isField, name]) => (isField ? !draft.fields.some((f) => f.id === name) : !draft.variables.some((v) => v.name === name)))
    .map(([token]) => token);
}

/**
 * A document-mode draft edited as text (HTML): a text area over a copy of its text where every `{{name}}` and
 * `{{field:id}}` is highlighted (the copy is hidden from assistive technology; the tokens are also listed in words).
 */
export function DocumentEditor({ editor, templateId }: { editor: DraftEditor; templateId: string }) {
  const { draft, update, error } = editor;
  const content = draft.body?.content ?? '';
  const area = useRef<HTMLTextAreaElement>(null);
  const overlay = useRef<HTMLPreElement>(null);
  const [type, setType] = useState<FieldType>('signature');
  const [selectedId, setSelectedId] = useState<string>();
  const selected = draft.fields.find((f) => f.id === selectedId);
  const bodyError = detailFor(error, '/body/body/content') ?? detailFor(error, '/body/body');
  const unknown = unknownTokens(content, draft);

  const setContent = (next: string) => update((d) => ({ ...d, body: { format: 'html', content: next } }));
  /** Puts `text` at the caret (or at the end), and the caret after it. */
  function insert(text: string) {
    const element = area.current;
    const at = element ? element.selectionStart : content.length;
    const end = element ? element.selectionEnd : content.length;
    setContent(content.slice(0, at) + text + content.slice(end));
    requestAnimationFrame(() => {
      element?.focus();
      element?.setSelectionRange(at + text.length, at + text.length);
    });
  }
  /** An imported DOCX replaces the text (an unsaved change, as typing is), its new `{{...}}` tokens declared. */
  async function replaceWithImport(imported: DocumentImport): Promise<string> {
    const { declared } = withBody(draft, imported.body.content);
    update((d) => withBody(d, imported.body.content).draft);
    return `${declared.length > 0 ? `Declared from its {{…}} tokens: ${declared.join(', ')}. ` : ''}Save the draft to keep it.`;
  }
  function addField() {
    const role = draft.roles[0]?.name;
    if (!role) return;
    const id = nextFieldId(type, draft.fields);
    update((d) => ({ ...d, fields: [...d.fields, { id, role, type, required: true }] }));
    insert(`{{field:${id}}}`);
    setSelectedId(id);
  }

  return (
    <div className="tpl-editor tpl-editor-document">
      <div className="tpl-document">
        <ImportDocx templateId={templateId} label="Replace the text with a DOCX" onImported={replaceWithImport} />
        <label htmlFor="tpl-body">Document body (HTML)</label>
        <div className="tpl-body-wrap">
          <pre ref={overlay} className="tpl-body-overlay" aria-hidden="true">
            {highlighted(content, draft)}
          </pre>
          <textarea
            id="tpl-body"
            ref={area}
            className="tpl-body-input"
            value={content}
            spellCheck={false}
            aria-invalid={bodyError || unknown.length > 0 ? true : undefined}
            aria-describedby="tpl-body-help tpl-body-error"
            onChange={(event) => setContent(event.target.value)}
            onScroll={(event) => {
              if (overlay.current) overlay.current.scrollTop = event.currentTarget.scrollTop;
            }}
          />
        </div>
        <p id="tpl-body-help" className="muted">
          Write {'{{name}}'} for a variable and {'{{field:id}}'} where a field stands. Highlighted: fields in blue, variables in green, undeclared tokens in red.
        </p>
        <div id="tpl-body-error" className="tpl-error">
          {bodyError}
          {unknown.length > 0 && ` Not declared in this draft: ${unknown.join(', ')}.`}
        </div>
      </div>
      <div className="tpl-editor-side">
        <section className="tpl-panel" aria-labelledby="tpl-doc-fields-heading">
          <h2 id="tpl-doc-fields-heading">Fields</h2>
          <ul className="tpl-field-list">
            {draft.fields.map((field) => (
              <li key={field.id}>
                <span className="tpl-swatch" style={{ background: roleColour(draft.roles, field.role) }} aria-hidden="true" />
                <Button className="button button-quiet" onPress={() => setSelectedId(field.id)} aria-pressed={field.id === selectedId}>
                  {fieldName(field)} ({field.id})
                </Button>
                {editor.fieldProblems(field).length > 0 && <span className="tpl-error">{editor.fieldProblems(field).join(' ')}</span>}
              </li>
            ))}
          </ul>
          <SelectField<FieldType> label="Type of the new field" value={type} options={FIELD_TYPES.map((t) => ({ value: t, label: FIELD_KINDS[t].label }))} onChange={setType} />
          <Button className="button" onPress={addField}>
            Add field at the cursor
          </Button>
          {draft.variables.length > 0 && (
            <div className="tpl-insert" role="group" aria-label="Insert a variable at the cursor">
              {draft.variables.map((v) => (
                <Button key={v.name} className="button button-quiet" onPress={() => insert(`{{${v.name}}}`)}>
                  Insert {`{{${v.name}}}`}
                </Button>
              ))}
            </div>
          )}
        </section>
        {selected && (
          <FieldPanel
            field={selected}
            draft={draft}
            editor={editor}
            onChange={(change) => {
              // A renamed field keeps its place: its token in the body is renamed with it.
              const body = change.id === undefined || !draft.body ? draft.body : { ...draft.body, content: draft.body.content.replaceAll(`{{field:${selected.id}}}`, `{{field:${change.id}}}`) };
              update((d) => ({ ...d, body, fields: d.fields.map((f) => (f.id === selected.id ? { ...f, ...change } : f)) }));
              if (change.id !== undefined) setSelectedId(change.id);
            }}
            onRemove={() => {
              update((d) => ({ ...d, fields: d.fields.filter((f) => f.id !== selected.id) }));
              setSelectedId(undefined);
            }}
          />
        )}
        <RolesAndVariables editor={editor} />
      </div>
    </div>
  );
}
