import { BusyButton, FormError, useAction } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { saveBody, withBody, type Draft } from './editor/model.ts';
import { FIRST_ROLE } from './editor/useDraft.ts';
import { toDraft, type Version } from './templateQuery.ts';
import type { DocumentImport } from './upload.ts';
import { ImportDocx, UploadDocument } from './UploadDocument.tsx';

/** A document-mode draft with nothing in it yet but its first role. */
const EMPTY_DOCUMENT: Draft = { file: null, body: null, roles: [FIRST_ROLE], fields: [], variables: [] };

interface StartDraftProps {
  templateId: string;
  name: string;
  latest?: Version;
  /** A draft was made: `message` says how (this section then goes, and the page says it where the focus can go). */
  onStarted: (message: string) => void;
}

/** No draft: upload a document, import a DOCX as text, write one as text, or start from the latest published version. */
export function StartDraft({ templateId, name, latest, onStarted }: StartDraftProps) {
  const { rest } = useSession();
  const action = useAction();
  const saveDraft = (body: Record<string, unknown>) => unwrap(rest.PUT('/v1/templates/{id}/draft', { params: { path: { id: templateId } }, body }));
  const start = (body: Record<string, unknown>, message: string) =>
    action.run(() => saveDraft(body)).then(
      () => onStarted(message),
      () => undefined,
    );

  const writeAsText = () => start(saveBody(withBody(EMPTY_DOCUMENT, `<h1>${escapeHtml(name)}</h1>\n<p></p>`).draft), 'A document-mode draft was started: write its text below, then save it.');
  const fromLatest = () => {
    if (!latest) return;
    const { file, body, ...rest } = toDraft(latest);
    return start({ ...(file ? { file } : { body }), ...rest }, `A new draft was started from version ${latest.version}: change it below, then publish it.`);
  };
  /** An imported DOCX becomes a document-mode draft at once, its `{{...}}` tokens declared (the API refuses others). */
  async function fromImport(imported: DocumentImport): Promise<string> {
    const { draft, declared } = withBody(EMPTY_DOCUMENT, imported.body.content);
    await saveDraft(saveBody(draft));
    return declared.length > 0 ? `Declared from its {{…}} tokens: ${declared.join(', ')}.` : '';
  }

  return (
    <section aria-labelledby="tpl-start-heading" className="tpl-section">
      <h2 id="tpl-start-heading">{latest ? 'Start a new draft' : 'Add the document'}</h2>
      <UploadDocument templateId={templateId} replacing={false} onUploaded={onStarted} />
      <ImportDocx templateId={templateId} label="Import a DOCX as editable text (document mode)" onImported={fromImport} onDone={onStarted} />
      <div className="tpl-actions">
        <BusyButton className="button" onPress={writeAsText} busy={false} blocked={action.busy}>
          Write the document as text
        </BusyButton>
        {latest && (
          <BusyButton className="button" onPress={fromLatest} busy={false} blocked={action.busy}>
            {`Edit a new draft from version ${latest.version}`}
          </BusyButton>
        )}
      </div>
      <FormError error={action.error} />
    </section>
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
}
