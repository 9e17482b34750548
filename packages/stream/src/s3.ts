/**
 * The object-store side of the mover, on the `minio` client.
 *
 * Uploads drive S3 multipart uploads by hand (initiate, upload parts, complete, abort) rather than
 * through `putObject`, because minio's multipart path lists the parts of an upload to resume it,
 * which the embedded test store (s3rver) does not implement, and because we want explicit bounds:
 * at most `concurrency` parts in flight and one being filled, so memory is about
 * partSize × (concurrency + 1) whatever the size of the object.
 */
import type { Readable } from 'node:stream';
import * as Minio from 'minio';
import type { StoreAccess } from '@sigil/proto/strata-jobs';
import { parseS3Endpoint } from './endpoint.ts';

export type S3Client = Minio.Client;

/** S3's limits on multipart uploads. */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
export const MAX_PART_SIZE = 5 * 1024 * 1024 * 1024;
export const MAX_PARTS = 10_000;

/** Builds a client from a store's endpoint URL (http or https, optional port) and credentials. */
export function createS3Client(access: Pick<StoreAccess, 'endpoint' | 'region' | 'pathStyle' | 'accessKeyId' | 'secretAccessKey'>): S3Client {
  const { hostname, port, useSSL } = parseS3Endpoint(access.endpoint);
  return new Minio.Client({
    endPoint: hostname,
    port,
    useSSL,
    region: access.region || undefined,
    pathStyle: access.pathStyle,
    accessKey: access.accessKeyId,
    secretKey: access.secretAccessKey,
  });
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new DOMException(typeof reason === 'string' ? reason : 'The operation was aborted', 'AbortError');
}

/** Resolves after `ms` (unref'd) without rejecting. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export interface UploadOptions {
  /** Bytes per part, at least 5 MiB (S3's minimum for all parts but the last). */
  partSizeBytes: number;
  /** Parts uploaded at once, at least 1. */
  concurrency: number;
  signal?: AbortSignal;
  contentType?: string;
}

export interface UploadResult {
  size: number;
  etag?: string;
  parts: number;
}

/**
 * Uploads everything `source` yields to `bucket/key`. A source of at most one part goes up with a
 * single PUT; a larger one as a multipart upload with at most `concurrency` parts in flight. On
 * any failure or abort the multipart upload is aborted (after in-flight parts settle, for at most
 * ten seconds) and the original error is rethrown, S3's message included.
 */
export async function uploadStream(client: S3Client, bucket: string, key: string, source: Readable, options: UploadOptions): Promise<UploadResult> {
  const { partSizeBytes: partSize, concurrency, signal } = options;
  if (!Number.isInteger(partSize) || partSize < MIN_PART_SIZE || partSize > MAX_PART_SIZE) {
    throw new Error(`part size must be an integer between ${MIN_PART_SIZE} and ${MAX_PART_SIZE} bytes, got ${partSize}`);
  }
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`upload concurrency must be an integer >= 1, got ${concurrency}`);
  const headers: Record<string, string> = options.contentType ? { 'Content-Type': options.contentType } : {};

  let uploadId: string | undefined;
  const done: { part: number; etag: string }[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  let partNumber = 0;
  let size = 0;
  let current: Buffer | undefined;
  let filled = 0;
  // Part buffers come back once their part is stored: a long upload reuses concurrency + 1 of them instead of
  // allocating one per part (fewer full garbage collections, which external memory on this scale triggers).
  const spare: Buffer[] = [];

  // Abort: stop reading (the source is destroyed with the reason) and stop waiting for parts.
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    if (!signal) return;
    onAbort = () => {
      const reason = abortReason(signal);
      reject(reason);
      source.destroy(reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => {});

  const waitForSlot = async (limit: number): Promise<void> => {
    while (inFlight.size > limit && !failure) await Promise.race([...inFlight, aborted]);
    if (failure) throw failure.error;
  };

  const dispatch = async (body: Buffer): Promise<void> => {
    if (failure) throw failure.error;
    uploadId ??= await Promise.race([client.initiateNewMultipartUpload(bucket, key, headers), aborted]);
    const number = ++partNumber;
    if (number > MAX_PARTS) throw new Error(`object ${key} needs more than ${MAX_PARTS} parts of ${partSize} bytes: raise the part size`);
    const id = uploadId;
    const job: Promise<void> = client
      .uploadPart({ bucketName: bucket, objectName: key, uploadID: id, partNumber: number, headers: {} }, body)
      .then(
        (result) => {
          done.push({ part: number, etag: result.etag });
          if (body.length === partSize) spare.push(body);
        },
        (error: unknown) => {
          failure ??= { error };
        },
      )
      .finally(() => inFlight.delete(job));
    inFlight.add(job);
    await waitForSlot(concurrency - 1);
  };

  try {
    if (signal?.aborted) throw abortReason(signal);
    for await (const data of source) {
      const chunk: Buffer = typeof data === 'string' ? Buffer.from(data) : (data as Buffer);
      let offset = 0;
      while (offset < chunk.length) {
        // A full part is sent only once more data exists: a source of exactly one part is one PUT.
        if (current && filled === partSize) {
          const body = current;
          current = undefined;
          await dispatch(body);
        }
        if (!current) {
          current = spare.pop() ?? Buffer.allocUnsafe(partSize);
          filled = 0;
        }
        const n = chunk.copy(current, filled, offset);
        filled += n;
        offset += n;
        size += n;
      }
    }
    if (signal?.aborted) throw abortReason(signal);

    if (uploadId === undefined) {
      const body = current ? current.subarray(0, filled) : Buffer.alloc(0);
      current = undefined;
      const result = await Promise.race([client.putObject(bucket, key, body, body.length, headers), aborted]);
      return { size, etag: result.etag || undefined, parts: 1 };
    }
    if (current && filled > 0) {
      const body = current.subarray(0, filled);
      current = undefined;
      await dispatch(body);
    }
    await waitForSlot(0);
    done.sort((a, b) => a.part - b.part);
    const result = await Promise.race([client.completeMultipartUpload(bucket, key, uploadId, done), aborted]);
    return { size, etag: result.etag || undefined, parts: done.length };
  } catch (error) {
    if (uploadId !== undefined) {
      // Parts still uploading after an abort could linger on some stores: let them settle first.
      await Promise.race([Promise.allSettled([...inFlight]), delay(10_000)]);
      await client.abortMultipartUpload(bucket, key, uploadId).catch(() => {});
    }
    throw failure && error !== failure.error && !signal?.aborted ? failure.error : error;
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/** The key already exists (a conditional put lost, or the object was there before). */
export class ObjectExistsError extends Error {
  readonly key: string;
  constructor(key: string, options?: ErrorOptions) {
    super(`object ${key} already exists`, options);
    this.name = 'ObjectExistsError';
    this.key = key;
  }
}

/** What a small object (a manifest, a segment's report) may weigh: anything larger is not what it claims to be. */
export const MAX_SMALL_OBJECT_BYTES = 16 * 1024 * 1024;

/**
 * How long a small object's body may send nothing before the read gives up. A body that stops short of its length on a
 * connection kept open (a store that announced one size and sent fewer bytes, a half-open connection) would otherwise
 * be waited for forever: CI saw a backup attempt hang there while it waited for another's lease.
 */
export const SMALL_READ_IDLE_MS = 30_000;

/** Reads a small object's stream whole, refusing one larger than `limit` and one that sends nothing for `idleMs`. */
export async function readSmall(stream: Readable, limit = MAX_SMALL_OBJECT_BYTES, idleMs = SMALL_READ_IDLE_MS): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const watch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => stream.destroy(new Error(`the store sent nothing for ${idleMs} ms before the object's end (${size} bytes read)`)), idleMs);
  };
  try {
    watch();
    for await (const chunk of stream) {
      watch();
      size += (chunk as Buffer).length;
      if (size > limit) {
        stream.destroy();
        throw new Error(`object larger than ${limit} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  } finally {
    clearTimeout(timer);
  }
}

/** A small object's bytes, or undefined when the key does not exist. */
export async function readSmallObject(client: S3Client, bucket: string, key: string, limit = MAX_SMALL_OBJECT_BYTES, idleMs = SMALL_READ_IDLE_MS): Promise<Buffer | undefined> {
  try {
    return await readSmall(await client.getObject(bucket, key), limit, idleMs);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'NotFound' || code === 'NoSuchKey') return undefined;
    throw error;
  }
}

/** True when the object exists, false on NotFound/NoSuchKey; other errors are thrown. */
export async function objectExists(client: S3Client, bucket: string, key: string): Promise<boolean> {
  try {
    await client.statObject(bucket, key);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'NotFound' || code === 'NoSuchKey') return false;
    throw error;
  }
}

/**
 * Writes a small object (a manifest) only if its key is new. With conditional put the store
 * enforces it (`If-None-Match: *`; 412 or 409 means the key exists → ObjectExistsError). Stores
 * without conditional put (`disableConditionalPut`): refuse an existing key, write, then read the
 * object back and compare the bytes, throwing when another writer's bytes are there.
 */
export async function putObjectUnique(
  client: S3Client,
  bucket: string,
  key: string,
  body: Buffer,
  options: { disableConditionalPut: boolean; contentType?: string },
): Promise<void> {
  const headers: Record<string, string> = options.contentType ? { 'Content-Type': options.contentType } : {};
  if (!options.disableConditionalPut) {
    try {
      await client.putObject(bucket, key, body, body.length, { ...headers, 'If-None-Match': '*' });
    } catch (error) {
      const code = errorCode(error);
      if (code === 'PreconditionFailed' || code === 'ConditionalRequestConflict') throw new ObjectExistsError(key, { cause: error });
      throw error;
    }
    return;
  }
  if (await objectExists(client, bucket, key)) throw new ObjectExistsError(key);
  await client.putObject(bucket, key, body, body.length, headers);
  const stored = await readSmall(await client.getObject(bucket, key));
  if (!stored.equals(body)) {
    throw new ObjectExistsError(key, { cause: new Error(`read-back of ${key} differs from what was written: another writer raced us`) });
  }
}

/**
 * Deletes `keys` with multi-object DELETE (batches of 1000); throws listing the keys the store
 * refused to delete. When the batch request itself fails (stores without multi-object delete, or
 * s3rver racing on shared directories) it falls back to one DELETE per key, which S3 makes
 * idempotent.
 */
export async function removeObjects(client: S3Client, bucket: string, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  let results: Awaited<ReturnType<S3Client['removeObjects']>>;
  try {
    results = await client.removeObjects(bucket, keys);
  } catch {
    for (const key of keys) await client.removeObject(bucket, key);
    return;
  }
  const failed = refusedKeys(results).map((r) => `${r.key}: ${r.reason}`);
  if (failed.length > 0) throw new Error(`could not delete ${failed.length} object(s): ${failed.slice(0, 5).join('; ')}${failed.length > 5 ? '; …' : ''}`);
}

/**
 * The keys a DeleteObjects answer names as not deleted. minio-js answers each as `{ Key, Code, Message }`, though its
 * type says `{ Error: {...} }`: both are read.
 */
export function refusedKeys(answer: Awaited<ReturnType<S3Client['removeObjects']>>): { key: string; reason: string }[] {
  return answer.flatMap((entry) => {
    if (!entry) return [];
    const error = (entry.Error ?? entry) as { Key?: string; Code?: string; Message?: string };
    if (error.Key === undefined && error.Code === undefined) return [];
    return [{ key: error.Key ?? '?', reason: error.Message ?? error.Code ?? 'error' }];
  });
}

/** Every key under `prefix` (recursive), in the store's (lexicographic) order. */
export async function* listKeys(client: S3Client, bucket: string, prefix: string): AsyncIterable<string> {
  for await (const item of client.listObjectsV2(bucket, prefix, true)) {
    const name = (item as Minio.BucketItem).name;
    if (typeof name === 'string') yield name;
  }
}

/** A GET URL valid for `expirySeconds` (S3 allows up to 7 days). */
export async function presignGet(client: S3Client, bucket: string, key: string, expirySeconds: number): Promise<string> {
  return await client.presignedGetObject(bucket, key, expirySeconds);
}

/** Creates the bucket unless it exists (a concurrent creator is fine). */
export async function ensureBucket(client: S3Client, bucket: string, region: string): Promise<void> {
  if (await client.bucketExists(bucket)) return;
  try {
    await client.makeBucket(bucket, region || undefined);
  } catch (error) {
    const code = errorCode(error);
    if ((code === 'BucketAlreadyOwnedByYou' || code === 'BucketAlreadyExists') && (await client.bucketExists(bucket))) return;
    throw error;
  }
}
