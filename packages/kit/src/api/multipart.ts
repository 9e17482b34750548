import type { Request, RequestHandler } from 'express';
import busboy from 'busboy';
import { AppError } from '../errors.ts';

/** A file part of a multipart request, read into memory (bounded by the parser's limit). */
export interface UploadedFile {
  fileName: string;
  contentType: string;
  bytes: Buffer;
}

const FILES = Symbol('files');
type WithFiles = Request & { [FILES]?: Record<string, UploadedFile> };

/** A limit as people read it: `512 KB`, `25 MB` (binary units, as the contract states them). */
const size = (bytes: number) => (bytes < 1024 * 1024 ? `${Math.round((bytes / 1024) * 10) / 10} KB` : `${Math.round((bytes / 1024 / 1024) * 10) / 10} MB`);

/**
 * `multipart/form-data` bodies: text parts become the body's members, and each file part's name maps to its file name
 * in the body (so the document's schema checks it like any field) while its bytes are kept for `uploadedFile`. One file
 * at most, of at most `limit` bytes (413 naming the limit).
 */
export function multipartBodyParser(limit: number): RequestHandler {
  return (req, _res, next) => {
    if (!String(req.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data')) return next();
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: limit, files: 1, fields: 20, fieldSize: 64 * 1024 } });
    } catch (error) {
      return next(new AppError('validation-failed', `The multipart body cannot be read: ${(error as Error).message}.`, { errors: [{ pointer: '/body', detail: 'is not valid multipart/form-data' }] }));
    }
    const body: Record<string, string> = {};
    const files: Record<string, UploadedFile> = {};
    let failure: AppError | undefined;
    parser.on('field', (name, value) => void (body[name] = value));
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => void (failure ??= new AppError('payload-too-large', `The file is larger than the limit of ${size(limit)} (${limit} bytes).`)));
      stream.on('end', () => {
        body[name] = info.filename ?? '';
        files[name] = { fileName: info.filename ?? '', contentType: (info.mimeType ?? 'application/octet-stream').toLowerCase(), bytes: Buffer.concat(chunks) };
      });
    });
    parser.on('filesLimit', () => void (failure ??= new AppError('validation-failed', 'Send one file per request.', { errors: [{ pointer: '/body/file', detail: 'one file at most' }] })));
    parser.on('error', (error: Error) => next(new AppError('validation-failed', `The multipart body cannot be read: ${error.message}.`, { errors: [{ pointer: '/body', detail: 'is not valid multipart/form-data' }] })));
    parser.on('close', () => {
      if (failure) return next(failure);
      req.body = body;
      (req as WithFiles)[FILES] = files;
      next();
    });
    req.pipe(parser);
  };
}

/** The file of a multipart part, when the request had one. */
export function uploadedFile(req: Request, name: string): UploadedFile | undefined {
  return (req as WithFiles)[FILES]?.[name];
}
