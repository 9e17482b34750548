import { useId, useRef, useState } from 'react';
import { ApiError } from '../../api/problem.ts';

interface FileUploadProps {
  label: string;
  /** The input's `accept`: extensions and media types. */
  accept: string;
  /** What the person may choose, in words. */
  help: string;
  /** What the API does once the file is sent (it answers when that is done). */
  converting: string;
  /** Sends the file, reporting the share sent; resolves to what happened, in words, or throws the API's refusal. */
  send: (file: File, onProgress: (fraction: number) => void) => Promise<string>;
}

/**
 * A file input that sends what is chosen at once: the upload's progress, then the conversion (the API answers once it
 * is done), then what happened, or the API's refusal beside the input (a bad file's detail names `/body`: the file).
 */
export function FileUpload({ label, accept, help, converting, send }: FileUploadProps) {
  const id = useId();
  const [progress, setProgress] = useState<number>();
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const input = useRef<HTMLInputElement>(null);

  async function upload(file: File) {
    setError(undefined);
    setDone(undefined);
    setProgress(0);
    try {
      setDone(await send(file, setProgress));
    } catch (e) {
      setError(e);
    } finally {
      setProgress(undefined);
      // The input is disabled while the file is sent, which drops its focus: it gets it back, unless the person moved on.
      requestAnimationFrame(() => {
        if (document.activeElement === document.body || document.activeElement === null) input.current?.focus();
      });
    }
  }

  const detail = error instanceof ApiError ? (error.fieldError('/body') ?? error.problem.detail ?? error.problem.title) : error ? String(error) : undefined;
  const sending = progress !== undefined && progress < 1;
  return (
    <div className="tpl-upload">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        ref={input}
        type="file"
        accept={accept}
        disabled={progress !== undefined}
        aria-describedby={`${id}-help ${id}-status${detail ? ` ${id}-error` : ''}`}
        aria-invalid={detail ? true : undefined}
        onChange={(event) => {
          const file = event.target.files?.[0];
          event.target.value = '';
          if (file) void upload(file);
        }}
      />
      <p id={`${id}-help`} className="muted">
        {help}
      </p>
      <div id={`${id}-status`} role="status">
        {progress !== undefined && (
          <>
            <progress max={1} value={sending ? progress : undefined} aria-label={sending ? 'Upload progress' : 'Converting'} />
            <span> {sending ? `Uploading… ${Math.round(progress * 100)}%` : converting}</span>
          </>
        )}
        {done && <span className="tpl-success">{done}</span>}
      </div>
      {detail && (
        <p id={`${id}-error`} role="alert" className="alert alert-error">
          <strong>{error instanceof ApiError ? error.problem.title : 'Upload failed'}.</strong> {detail}
        </p>
      )}
    </div>
  );
}
