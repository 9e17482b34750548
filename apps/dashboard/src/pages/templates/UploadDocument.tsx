import { useId, useState } from 'react';
import { ApiError } from '../../api/problem.ts';
import { useSession } from '../../app/session.tsx';
import { ACCEPTED_FILES, uploadTemplateFile, type TemplateFile } from './upload.ts';

/**
 * "Upload document": a PDF, or a DOCX/DOC/ODT/RTF the API converts, becomes the draft's document. Shows the upload's
 * progress, then the conversion (the API answers once the PDF is made), then the API's refusal (a conversion error
 * names `/body`) or what the upload did.
 */
export function UploadDocument({ templateId, replacing, onUploaded }: { templateId: string; replacing: boolean; onUploaded: (file: TemplateFile) => void }) {
  const { mode } = useSession();
  const id = useId();
  const [progress, setProgress] = useState<number>();
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();

  async function upload(file: File) {
    setError(undefined);
    setDone(undefined);
    setProgress(0);
    try {
      const stored = await uploadTemplateFile(templateId, file, mode, setProgress);
      const removed = stored.draftFieldsRemoved ?? [];
      setDone(
        `${file.name} uploaded${stored.converted ? ' and converted to PDF' : ''}: ${stored.pageCount ?? '?'} ${stored.pageCount === 1 ? 'page' : 'pages'}.` +
          (removed.length > 0 ? ` Fields that did not fit its pages were taken out of the draft: ${removed.join(', ')}.` : ''),
      );
      onUploaded(stored);
    } catch (e) {
      setError(e);
    } finally {
      setProgress(undefined);
    }
  }

  const detail = error instanceof ApiError ? (error.fieldError('/body') ?? error.problem.detail ?? error.problem.title) : error ? String(error) : undefined;
  const sending = progress !== undefined && progress < 1;
  return (
    <div className="tpl-upload">
      <label htmlFor={id}>{replacing ? 'Upload document (replaces the draft’s document)' : 'Upload document'}</label>
      <input
        id={id}
        type="file"
        accept={ACCEPTED_FILES}
        disabled={progress !== undefined}
        aria-describedby={`${id}-help ${id}-status`}
        aria-invalid={detail ? true : undefined}
        onChange={(event) => {
          const file = event.target.files?.[0];
          event.target.value = '';
          if (file) void upload(file);
        }}
      />
      <p id={`${id}-help`} className="muted">
        PDF, or a Word (DOCX, DOC), OpenDocument (ODT) or RTF file, converted to PDF keeping its layout.
      </p>
      <div id={`${id}-status`} role="status">
        {progress !== undefined && (
          <>
            <progress max={1} value={sending ? progress : undefined} aria-label={sending ? 'Upload progress' : 'Converting'} />
            <span> {sending ? `Uploading… ${Math.round(progress * 100)}%` : 'Uploaded; checking and converting the document…'}</span>
          </>
        )}
        {done && <span className="tpl-success">{done}</span>}
      </div>
      {detail && (
        <p role="alert" className="alert alert-error">
          <strong>{error instanceof ApiError ? error.problem.title : 'Upload failed'}.</strong> {detail}
        </p>
      )}
    </div>
  );
}
