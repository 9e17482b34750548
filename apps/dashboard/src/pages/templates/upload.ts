import type { components } from '@sigil/proto/api/sigil';
import { modeHeaders, type Mode } from '../../api/mode.ts';
import { ApiError, isProblem, localProblem } from '../../api/problem.ts';

export type TemplateFile = components['schemas']['TemplateFile'] & { id?: string };
/** The contract's DocumentImport: a DOCX as a document-mode body (`body` is typed loosely there), and its warnings. */
export type DocumentImport = { body: { format: 'html'; content: string }; warnings: string[] };

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** The types POST /v1/templates/{id}/files takes (the contract's uploadTemplateFile), by file extension. */
const FILE_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  docx: DOCX,
  doc: 'application/msword',
  odt: 'application/vnd.oasis.opendocument.text',
  rtf: 'application/rtf',
};
/** The one type POST /v1/templates/{id}/import takes (the contract's importTemplateDocument). */
const IMPORT_TYPES: Record<string, string> = { docx: DOCX };

/** The `accept` of a file input for these types: extensions and media types. */
const acceptOf = (types: Record<string, string>) =>
  Object.keys(types)
    .map((extension) => `.${extension}`)
    .concat(Object.values(types))
    .join(',');

export const ACCEPTED_FILES = acceptOf(FILE_TYPES);
export const ACCEPTED_IMPORTS = acceptOf(IMPORT_TYPES);

/** The media type to send: the browser's when it is one the operation takes, else the one its extension names. */
export function uploadType(file: File, types: Record<string, string> = FILE_TYPES): string | undefined {
  if (Object.values(types).includes(file.type)) return file.type;
  return types[file.name.split('.').pop()?.toLowerCase() ?? ''];
}

/** A refusal made here, before sending, in the shape the API's own has (its detail under `/body`). */
function unsupported(file: File, what: string): ApiError {
  const problem = localProblem(415, `${file.name} is not ${what}.`);
  return new ApiError({ ...problem, title: 'Unsupported file', errors: [{ pointer: '/body', detail: problem.detail ?? '' }] });
}

/**
 * Sends a file as a request's raw body. Template files go through XMLHttpRequest rather than the typed REST client
 * because only XHR reports upload progress (fetch has no upload progress events); the requests are the contract's
 * all the same: the raw file as the body, the session cookie, `sigil-mode` in test mode, and a refusal thrown as the
 * API's problem. `onProgress` gets the share sent (0 to 1); once it is 1 the API is converting.
 */
function sendFile<T>(path: string, file: File, type: string, mode: Mode, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.withCredentials = true;
    xhr.responseType = 'json';
    xhr.setRequestHeader('content-type', type);
    for (const [name, value] of Object.entries(modeHeaders(mode))) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    // Small files may send without a progress event: the upload's end says the body is all sent.
    xhr.upload.addEventListener('load', () => onProgress(1));
    xhr.addEventListener('load', () => {
      const body: unknown = xhr.response;
      if (xhr.status >= 200 && xhr.status < 300) return resolve(body as T);
      reject(new ApiError(isProblem(body) ? body : localProblem(xhr.status, `The API answered ${xhr.status} ${xhr.statusText}.`)));
    });
    xhr.addEventListener('error', () => reject(new ApiError(localProblem(0, 'The upload did not reach the API (network error).'))));
    xhr.addEventListener('abort', () => reject(new ApiError(localProblem(0, 'The upload was stopped.'))));
    xhr.send(file);
  });
}

/** POST /v1/templates/{id}/files: the file (a PDF, or converted to one) becomes the draft's document. */
export function uploadTemplateFile(templateId: string, file: File, mode: Mode, onProgress: (fraction: number) => void): Promise<TemplateFile> {
  const type = uploadType(file);
  if (!type) return Promise.reject(unsupported(file, 'a PDF, DOCX, DOC, ODT or RTF file'));
  return sendFile(`/v1/templates/${encodeURIComponent(templateId)}/files`, file, type, mode, onProgress);
}

/** POST /v1/templates/{id}/import: a DOCX converted to an editable document-mode body (nothing is stored). */
export function importDocx(templateId: string, file: File, mode: Mode, onProgress: (fraction: number) => void): Promise<DocumentImport> {
  const type = uploadType(file, IMPORT_TYPES);
  if (!type) return Promise.reject(unsupported(file, 'a DOCX file'));
  return sendFile(`/v1/templates/${encodeURIComponent(templateId)}/import`, file, type, mode, onProgress);
}
