import { BusyButton, FormError } from '@sigil/web-ui';
import { useSession } from '../../../app/session.tsx';
import { UploadDocument } from '../UploadDocument.tsx';
import { useVersionDocument } from '../Versions.tsx';
import { DocumentEditor } from './DocumentEditor.tsx';
import { FieldEditor } from './FieldEditor.tsx';
import type { Draft, PageSize } from './model.ts';
import { useDraft } from './useDraft.ts';

/** Pointers the editors show beside their own controls; anything else goes in the form error. */
const SHOWN_IN_EDITOR = ['/body/fields', '/body/roles', '/body/variables', '/body/body'];

interface DraftWorkspaceProps {
  templateId: string;
  saved: Draft;
  pages: readonly PageSize[];
  /** The draft changed on the server: read it again. */
  onChanged: () => void;
  /** What a publish or a new document did, for the page to say where the focus can go (this editor goes with both). */
  onOutcome: (message: string) => void;
}

/** The draft: save and publish on top, then the field editor (a file draft) or the text editor (document mode). */
export function DraftWorkspace({ templateId, saved, pages, onChanged, onOutcome }: DraftWorkspaceProps) {
  const { can } = useSession();
  const editor = useDraft(templateId, saved, onChanged, onOutcome);
  const documentOf = useVersionDocument(templateId);
  const { draft, dirty, busy, error, notice } = editor;
  return (
    <section aria-labelledby="tpl-draft-heading" className="tpl-section">
      <h2 id="tpl-draft-heading" className="tpl-draft-heading">
        Draft {draft.file ? '' : '(document mode)'}
      </h2>
      {/* Stays in view while the editor scrolls under it; the editor's controls keep clear of it (scroll-margin). */}
      <div className="tpl-toolbar" role="group" aria-label="Draft actions">
        <span className={dirty ? 'tpl-unsaved' : 'muted'} role="status">
          {busy === 'save' ? 'Saving…' : busy === 'publish' ? 'Publishing…' : dirty ? 'Unsaved changes' : (notice ?? 'All changes saved')}
        </span>
        <div className="tpl-actions">
          <BusyButton className="button" onPress={editor.save} busy={busy === 'save'} busyLabel="Saving…" blocked={busy !== undefined} isDisabled={!can('template:write')}>
            Save draft
          </BusyButton>
          {can('template:publish') && (
            <BusyButton className="button button-primary" onPress={editor.publish} busy={busy === 'publish'} busyLabel="Publishing…" blocked={busy !== undefined}>
              Publish
            </BusyButton>
          )}
        </div>
      </div>
      <FormError error={error} fields={SHOWN_IN_EDITOR} />
      {draft.file && <UploadDocument templateId={templateId} replacing onUploaded={(message) => (onOutcome(message), onChanged())} />}
      {draft.file ? (
        <FieldEditor editor={editor} pageSizes={pages} documentKey={draft.file} loadDocument={() => documentOf('draft')} />
      ) : (
        <DocumentEditor editor={editor} templateId={templateId} />
      )}
    </section>
  );
}
