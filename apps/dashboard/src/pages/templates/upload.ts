import type { components } from '@sigil/proto/api/sigil';
import { modeHeaders, type Mode } from '../../api/mode.ts';
import { ApiError, isProblem, localProblem } from '../../api/problem.ts';

export type TemplateFile = components['schemas']['TemplateFile'] & { id?: string };

/** The types POST /v1/templates/{id}/files takes (the contract's uploadTemplateFile), by file extension. */
const TYPES_BY_EXTENSION: Record<string, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  doc: 'application/msword',
  odt: 'application/vnd.oasis.opendocument.text',
  rtf: 'application/rtf',
};

export const ACCEPTED_FILES = Object.keys(TYPES_BY_EXTENSION)
  .map((extension) => `.${extension}`)
  .concat(Object.values(TYPES_BY_EXTENSION))
  .join(',');

/** The media type to send: the browser's when it is one the API takes, else the one its extension names. */
export function uploadType(file: File): string | undefined {
  if (Object.values(TYPES_BY_EXTENSION).includes(file.type)) return file.type;
  return TYPES_BY_EXTENSION[file.name.split('.').pop()?.toLowerCase() ?? ''];
}

/**
 * Uploads a template file. This one write goes through XMLHttpRequest rather than the typed REST client because only
 * XHR reports upload progress (fetch has no upload progress events); the request is the contract's
 * uploadTemplateFile all the same: the raw file as the body, the session cookie, `sigil-mode` in test mode, and a
 * refusal thrown as the API's problem.
 */
export function uploadTemplateFile(templateId: string, file: File, mode: Mode, onProgress: (fraction: number) => void): Promise<TemplateFile> {
  const type = uploadType(file);
  if (!type) {
    const problem = localProblem(415, `${file.name} is not a PDF, DOCX, DOC, ODT or RTF file.`);
    return Promise.reject(new ApiError({ ...problem, title: 'Unsupported file', errors: [{ pointer: '/body', detail: problem.detail ?? '' }] }));
  }
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/v1/templates/${encodeURIComponent(templateId)}/files`);
    xhr.withCredentials = true;
    xhr.responseType = 'json';
    xhr.setRequestHeader('content-type', type);
    for (const [name, value] of Object.entries(modeHeaders(mode))) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    });
    xhr.addEventListener('load', () => {
      const body: unknown = xhr.response;
      if (xhr.status >= 200 && xhr.status < 300) return resolve(body as TemplateFile);
      reject(new ApiError(isProblem(body) ? body : localProblem(xhr.status, `The API answered ${xhr.status} ${xhr.statusText}.`)));
    });
    xhr.addEventListener('error', () => reject(new ApiError(localProblem(0, 'The upload did not reach the API (network error).'))));
    xhr.addEventListener('abort', () => reject(new ApiError(localProblem(0, 'The upload was stopped.'))));
    xhr.send(file);
  });
}
