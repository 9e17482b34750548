/**
 * Object downloads that survive a dropped connection. A GET of a large object can lose its connection half-way
 * (a proxy's idle timeout while the reader is backpressured, a store restarting, a busy local store closing a
 * socket): the download asks again for the bytes it has not read yet (`Range: bytes=<offset>-`) instead of
 * failing a restore that has already written gigabytes. The caller's SHA-256 check over the whole stream still
 * catches an object that changed between the two requests.
 */
import { Readable } from 'node:stream';
import type { S3Client } from './s3.ts';

export interface DownloadOptions {
  /** How many times a dropped body is resumed before the error is thrown (default 3). */
  resumeAttempts?: number;
  /** Milliseconds before the n-th resume: n × this (default 200). */
  resumeDelayMs?: number;
}

/** The errors of a connection lost under a body, as Node and its HTTP client report them. */
export function isConnectionDrop(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (!e) return false;
  if (['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED'].includes(String(e.code))) return true;
  return e.message === 'aborted' || e.message === 'socket hang up';
}

/** The object's bytes as a stream; a body whose connection drops is resumed from the next byte (module comment). */
export async function downloadStream(client: S3Client, bucket: string, key: string, options: DownloadOptions = {}): Promise<Readable> {
  const attempts = options.resumeAttempts ?? 3;
  const delayMs = options.resumeDelayMs ?? 200;
  const first = await client.getObject(bucket, key);
  async function* bytes(): AsyncGenerator<Buffer> {
    let body: Readable = first;
    let offset = 0;
    for (let resumed = 0; ; ) {
      try {
        for await (const chunk of body) {
          offset += (chunk as Buffer).length;
          yield chunk as Buffer;
        }
        return;
      } catch (error) {
        body.destroy();
        if (!isConnectionDrop(error) || resumed >= attempts) {
          throw new Error(`download of ${key} lost its connection after ${offset} bytes: ${(error as Error).message}`, { cause: error });
        }
        resumed++;
        await new Promise((resolve) => setTimeout(resolve, resumed * delayMs).unref());
        body = await client.getPartialObject(bucket, key, offset);
      }
    }
  }
  const stream = Readable.from(bytes(), { objectMode: false });
  // A reader that stops early (an aborted restore) closes the body it was reading.
  stream.once('close', () => first.destroy());
  return stream;
}
