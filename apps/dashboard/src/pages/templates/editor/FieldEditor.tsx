import { useEffect, useState, type DragEvent } from 'react';
import { FieldPanel } from './FieldPanel.tsx';
import { boxAt, clampToPage, isPlaced, movedToPage, nextFieldId, roleColour, snapMove, type Box, type DraftField, type FieldType, type PageSize } from './model.ts';
import { FIELD_DRAG_TYPE, Palette } from './Palette.tsx';
import { PdfPages } from './PdfPages.tsx';
import { FIELD_KEYS_HELP_ID, PlacedField } from './PlacedField.tsx';
import { RolesAndVariables } from './RolesAndVariables.tsx';
import type { DraftEditor } from './useDraft.ts';
import { useFieldDrag, type Placement } from './useFieldDrag.ts';

interface FieldEditorProps {
  editor: DraftEditor;
  /** The draft's file's pages in points (GraphQL `TemplateVersion.pages`). */
  pageSizes: readonly PageSize[];
  /** Reads the draft's PDF; `documentKey` (the file id) changes when another file is uploaded. */
  loadDocument: () => Promise<ArrayBuffer>;
  documentKey: string;
}

/** The field editor of a file draft: the palette, the PDF's pages with their fields, and the chosen field's panel. */
export function FieldEditor({ editor, pageSizes, loadDocument, documentKey }: FieldEditorProps) {
  const { draft, update, fieldProblems } = editor;
  const [type, setType] = useState<FieldType>('signature');
  const [role, setRole] = useState(draft.roles[0]?.name ?? '');
  const [placePage, setPlacePage] = useState(1);
  const [selectedId, setSelectedId] = useState<string>();
  // A field just added, or drawn anew on another page, takes the focus (scrolled into view unless the pointer holds it).
  const [focusRequest, setFocusRequest] = useState<{ id: string; scroll: boolean }>();
  const selected = draft.fields.find((f) => f.id === selectedId);

  useEffect(() => {
    if (!draft.roles.some((r) => r.name === role)) setRole(draft.roles[0]?.name ?? '');
  }, [draft.roles, role]);
  useEffect(() => {
    if (!focusRequest) return;
    document.querySelector<HTMLElement>(`.tpl-field[data-field-id="${CSS.escape(focusRequest.id)}"]`)?.focus({ preventScroll: !focusRequest.scroll });
    setFocusRequest(undefined);
  }, [focusRequest, draft.fields]);

  const boxesOn = (page: number, except?: string): Box[] => draft.fields.filter((f) => isPlaced(f) && f.page === page && f.id !== except) as Box[];

  function addField(fieldType: FieldType, page: number, point: { x: number; y: number }) {
    const size = pageSizes[page - 1];
    if (!size || !role) return;
    const box = clampToPage(snapMove(boxAt(fieldType, point, size), boxesOn(page)), size);
    const id = nextFieldId(fieldType, draft.fields);
    const field: DraftField = { id, role, type: fieldType, required: true, page, ...box };
    update((d) => ({ ...d, fields: [...d.fields, field] }));
    setSelectedId(id);
    setFocusRequest({ id, scroll: true });
  }

  function changeField(id: string, change: Partial<DraftField>) {
    update((d) => ({ ...d, fields: d.fields.map((f) => (f.id === id ? { ...f, ...change } : f)) }));
    if (change.id !== undefined) setSelectedId(change.id);
  }

  // A dragged field that changes page is drawn anew by that page: it gets the focus back where the pointer holds it.
  const startDrag = useFieldDrag({
    pageSizes,
    othersOn: boxesOn,
    place(id, placement: Placement) {
      const before = draft.fields.find((f) => f.id === id);
      changeField(id, placement);
      if (before && before.page !== placement.page) setFocusRequest({ id, scroll: false });
    },
  });

  /** To page `page`, where it stood on its own (kept inside the new page); `focus` follows it there (the keyboard). */
  function moveToPage(field: DraftField & Box, page: number, focus: boolean) {
    const size = pageSizes[page - 1];
    if (!size || page === field.page) return;
    changeField(field.id, movedToPage(field, page, size));
    if (focus) setFocusRequest({ id: field.id, scroll: true });
  }

  function removeField(id: string) {
    update((d) => ({ ...d, fields: d.fields.filter((f) => f.id !== id) }));
    setSelectedId(undefined);
  }

  function onDrop(event: DragEvent<HTMLDivElement>, page: number, size: PageSize) {
    const dropped = event.dataTransfer.getData(FIELD_DRAG_TYPE) as FieldType;
    if (!dropped) return;
    event.preventDefault();
    const rect = event.currentTarget.getBoundingClientRect();
    addField(dropped, page, { x: ((event.clientX - rect.left) / rect.width) * size.width, y: ((event.clientY - rect.top) / rect.height) * size.height });
  }

  return (
    <div className="tpl-editor">
      <div className="tpl-editor-side">
        <Palette
          roles={draft.roles}
          role={role}
          onRole={setRole}
          type={type}
          onType={setType}
          pageCount={pageSizes.length}
          page={placePage}
          onPage={setPlacePage}
          onPlace={() => {
            const size = pageSizes[placePage - 1];
            if (size) addField(type, placePage, { x: size.width / 2, y: size.height / 2 });
          }}
        />
        <p id={FIELD_KEYS_HELP_ID} className="muted tpl-keys-help">
          A focused field: arrow keys move it by 1 point, Shift+arrow by 10, Alt (Option)+arrow resizes it, Page Up and Page Down move it to the page before or after, Delete removes it.
        </p>
      </div>
      <PdfPages
        label="Document pages"
        load={loadDocument}
        documentKey={documentKey}
        pageSizes={pageSizes}
        pageProps={(number, size) => ({
          'data-page': String(number),
          role: 'group',
          'aria-label': `Page ${number}`,
          onDragOver: (event: DragEvent<HTMLDivElement>) => {
            if (!event.dataTransfer.types.includes(FIELD_DRAG_TYPE)) return;
            event.preventDefault();
            event.dataTransfer.dropEffect = 'copy';
          },
          onDrop: (event: DragEvent<HTMLDivElement>) => onDrop(event, number, size),
        })}
        overlay={(number, size) =>
          draft.fields.filter(isPlaced).filter((f) => f.page === number).map((field) => (
            <PlacedField
              key={field.id}
              field={field}
              page={size}
              colour={roleColour(draft.roles, field.role)}
              selected={field.id === selectedId}
              problems={fieldProblems(field)}
              onSelect={() => setSelectedId(field.id)}
              onDragStart={(event, mode) => startDrag(event, field, mode)}
              onChange={(box) => changeField(field.id, box)}
              onMovePage={(by) => moveToPage(field, field.page + by, true)}
              onRemove={() => removeField(field.id)}
            />
          ))
        }
      />
      <div className="tpl-editor-side">
        {selected ? (
          <FieldPanel
            field={selected}
            draft={draft}
            editor={editor}
            pageCount={pageSizes.length}
            onPage={(page) => isPlaced(selected) && moveToPage(selected, page, false)}
            onChange={(change) => changeField(selected.id, change)}
            onRemove={() => removeField(selected.id)}
          />
        ) : (
          <section className="tpl-panel" aria-labelledby="tpl-field-heading">
            <h2 id="tpl-field-heading">Field properties</h2>
            <p className="muted">Choose a field on a page to see and change its type, role, whether it is required and its variable.</p>
          </section>
        )}
        <RolesAndVariables editor={editor} />
      </div>
    </div>
  );
}

