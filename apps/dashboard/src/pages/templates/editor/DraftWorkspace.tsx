import { Button } from 'react-aria-components';
import { useSession } from '../../../app/session.tsx';
import { FormError } from '../../../components/Form.tsx';
import { UploadDocument } from '../UploadDocument.tsx';
import { useVersionDocument } from '../Versions.tsx';
import { DocumentEditor } from './DocumentEditor.tsx';
import { FieldEditor } from './FieldEditor.tsx';
import type { Draft, PageSize } from './model.ts';
import { useDraft } from './useDraft.ts';

/** Pointers the editors show beside their own controls; anything else goes in the form error. */
const SHOWN_IN_EDITOR = ['/body/fields', '/body/roles', '/body/variables', '/body/body'];

/** The draft: save and publish on top, then the field editor (a file draft) or the text editor (document mode). */
export function DraftWorkspace({ templateId, saved, pages, onChanged, onPublished }: { templateId: string; saved: Draft; pages: readonly PageSize[]; onChanged: () => void; onPublished: (message: string) => void }) {
  const { can } = useSession();
  const editor = useDraft(templateId, saved, onChanged, onPublished);
  const documentOf = useVersionDocument(templateId);
  const { draft, dirty, busy, error, notice } = editor;
  return (
    <section aria-labelledby="tpl-draft-heading" className="tpl-section">
      <div className="tpl-toolbar">
        <h2 id="tpl-draft-heading">Draft {draft.file ? '' : '(document mode)'}</h2>
        <span className={dirty ? 'tpl-unsaved' : 'muted'} role="status">
          {busy === 'save' ? 'Saving…' : busy === 'publish' ? 'Publishing…' : dirty ? 'Unsaved changes' : (notice ?? 'All changes saved')}
        </span>
        <div className="tpl-actions">
          <Button className="button" onPress={editor.save} isDisabled={busy !== undefined || !can('template:write')}>
            Save draft
          </Button>
          {can('template:publish') && (
            <Button className="button button-primary" onPress={editor.publish} isDisabled={busy !== undefined}>
              Publish
            </Button>
          )}
        </div>
      </div>
      <FormError error={error} fields={SHOWN_IN_EDITOR} />
      {draft.file && <UploadDocument templateId={templateId} replacing onUploaded={onChanged} />}
      {draft.file ? (
        <FieldEditor editor={editor} pageSizes={pages} documentKey={draft.file} loadDocument={() => documentOf('draft')} />
      ) : (
        <DocumentEditor editor={editor} />
      )}
    </section>
  );
}
