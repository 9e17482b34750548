import { useSession } from '../../app/session.tsx';
import { FileUpload } from './FileUpload.tsx';
import { ACCEPTED_FILES, ACCEPTED_IMPORTS, importDocx, uploadTemplateFile, type DocumentImport } from './upload.ts';

/**
 * "Upload document": a PDF, or a DOCX/DOC/ODT/RTF the API converts to PDF keeping its layout, becomes the draft's
 * document (POST /files). `onUploaded` gets what the upload did in words, including the fields its pages could not hold.
 */
export function UploadDocument({ templateId, replacing, onUploaded }: { templateId: string; replacing: boolean; onUploaded: (message: string) => void }) {
  const { mode } = useSession();
  async function send(file: File, onProgress: (fraction: number) => void): Promise<string> {
    const stored = await uploadTemplateFile(templateId, file, mode, onProgress);
    const removed = stored.draftFieldsRemoved ?? [];
    const message =
      `${file.name} uploaded${stored.converted ? ' and converted to PDF' : ''}: ${stored.pageCount ?? '?'} ${stored.pageCount === 1 ? 'page' : 'pages'}.` +
      (removed.length > 0 ? ` Fields that did not fit its pages were taken out of the draft: ${removed.join(', ')}.` : '');
    onUploaded(message);
    return message;
  }
  return (
    <FileUpload
      label={replacing ? 'Upload document (replaces the draft’s document)' : 'Upload document'}
      accept={ACCEPTED_FILES}
      help="PDF, or a Word (DOCX, DOC), OpenDocument (ODT) or RTF file, converted to PDF keeping its layout."
      converting="Uploaded; checking and converting the document…"
      send={send}
    />
  );
}

/**
 * "Import a DOCX as text": the API converts a DOCX into an editable document-mode body (POST /import, nothing stored);
 * `onImported` makes it the draft's text and says in words what else it did; `onDone` gets the whole message, with
 * the API's warnings (what the conversion could not keep).
 */
export function ImportDocx({ templateId, label, onImported, onDone }: { templateId: string; label: string; onImported: (imported: DocumentImport) => Promise<string>; onDone?: (message: string) => void }) {
  const { mode } = useSession();
  async function send(file: File, onProgress: (fraction: number) => void): Promise<string> {
    const imported = await importDocx(templateId, file, mode, onProgress);
    const applied = await onImported(imported);
    const warnings = imported.warnings.length > 0 ? ` The conversion said: ${imported.warnings.join(' ')}` : '';
    const message = `${file.name} imported as the draft’s text.${applied ? ` ${applied}` : ''}${warnings}`;
    onDone?.(message);
    return message;
  }
  return (
    <FileUpload
      label={label}
      accept={ACCEPTED_IMPORTS}
      help="A Word document (DOCX) whose text, headings, lists and tables become the draft’s editable text; write {{name}} in it for a variable and {{field:id}} where a field stands."
      converting="Uploaded; converting the DOCX to editable text…"
      send={send}
    />
  );
}
