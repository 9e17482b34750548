/**
 * The mover's two data paths, each one `stream/promises` pipeline so back-pressure runs end to end
 * (a slow store slows the dump; memory stays flat in the size of the database) and any failure
 * tears the whole chain down:
 *
 *   upload:   source → raw counter → compress → age encrypt → SHA-256 tap (stored bytes)
 *             → throttle → stall watchdog → S3 multipart upload
 *   download: S3 GET → SHA-256 tap → throttle → stall watchdog → age decrypt → decompress
 *             → raw counter → sink
 *
 * Errors surface with their original message: the source's, S3's, `no data flowed for 60s`, the
 * abort reason. A failed upload is aborted on the store (no partial object).
 */
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createAgeDecryptStream, createAgeEncryptStream } from './age/index.ts';
import { downloadStream } from './download.ts';
import { uploadStream, type S3Client } from './s3.ts';
import { createByteCounter, createCoalescer, createHashTap, createStallWatchdog, createThrottle, stallMessage, systemClock, type StreamClock } from './taps.ts';
import { compressesInProcess, createCompressStream, createDecompressStream, type CompressionAlgorithm, type CompressionOptions } from './zstd.ts';

/** stream/promises `pipeline` without its fixed-arity overloads (ours are longer than they cover). */
const pipelineAll = pipeline as unknown as (...stages: unknown[]) => Promise<void>;

/** Progress callbacks run at most this often. */
export const PROGRESS_INTERVAL_MS = 250;

export interface UploadPipelineOptions {
  source: Readable;
  compression: CompressionOptions;
  /** age recipients (`age1...`), at least one: every object is encrypted to all of them. */
  recipients: string[];
  client: S3Client;
  bucket: string;
  key: string;
  partSizeBytes: number;
  concurrency: number;
  /** 0 = unlimited. */
  bandwidthBytesPerSecond: number;
  /**
   * 0 disables the watchdog. It also fires when the store stops taking parts: keep it above the
   * time one part takes to upload at the slowest expected rate.
   */
  stallTimeoutMs: number;
  /** (bytes read from the source, bytes stored) at most every 250 ms while bytes move. */
  onProgress?: (rawBytes: number, storedBytes: number) => void;
  signal?: AbortSignal;
  contentType?: string;
  /** A source of a few kilobytes (an inventory): compressed in this process rather than by the zstd program. */
  smallSource?: boolean;
  /**
   * The source is compressed already (a `zstdFilter` read the tool's output): no compress stage, `rawBytes` of the
   * result counts the compressed bytes, and progress takes the raw bytes so far from `rawProgress`.
   */
  precompressed?: { rawProgress: () => number };
  /** For tests: the throttle's and the watchdog's time. */
  clock?: StreamClock;
}

export interface UploadPipelineResult {
  rawBytes: number;
  storedBytes: number;
  /** Hex SHA-256 of the stored object. */
  sha256: string;
  parts: number;
  etag?: string;
}

export interface DownloadPipelineOptions {
  client: S3Client;
  bucket: string;
  key: string;
  /** Hex SHA-256 the object must have (from the manifest). */
  expectedSha256: string;
  /** Text of an age identity file. */
  identity: string;
  compression: CompressionAlgorithm;
  sink: Writable;
  bandwidthBytesPerSecond: number;
  /** 0 disables the watchdog. Only a silent store counts: time the sink spends not reading does not. */
  stallTimeoutMs: number;
  /** (bytes written to the sink, bytes downloaded) at most every 250 ms while bytes move. */
  onProgress?: (rawBytes: number, storedBytes: number) => void;
  signal?: AbortSignal;
  clock?: StreamClock;
}

export interface DownloadPipelineResult {
  storedBytes: number;
  rawBytes: number;
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException(typeof reason === 'string' ? reason : 'The operation was aborted', 'AbortError');
}

function isTeardownError(error: unknown): boolean {
  const e = error as { code?: unknown; name?: unknown } | null;
  return e?.code === 'ERR_STREAM_PREMATURE_CLOSE' || e?.name === 'AbortError' || e?.code === 'ABORT_ERR';
}

/**
 * Reports progress at most every PROGRESS_INTERVAL_MS. Each look is scheduled from the end of the one before
 * (setTimeout, not setInterval): a busy process runs an interval's late callback and then the next one on its old
 * schedule, closer together than the interval (207 ms apart for 250 ms, seen under CI load).
 */
function progressReporter(onProgress: ((raw: number, stored: number) => void) | undefined, read: () => [number, number]): () => void {
  if (!onProgress) return () => {};
  let last = [-1, -1];
  let stopped = false;
  let timer: NodeJS.Timeout;
  const look = () => {
    if (stopped) return;
    const now = read();
    if (now[0] !== last[0] || now[1] !== last[1]) {
      last = now;
      try {
        onProgress(now[0], now[1]);
      } catch {
        // A failing progress sink must not break the transfer.
      }
    }
    timer = setTimeout(look, PROGRESS_INTERVAL_MS);
    timer.unref();
  };
  timer = setTimeout(look, PROGRESS_INTERVAL_MS);
  timer.unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Compresses, encrypts, hashes and uploads `source` to `bucket/key`. */
export async function runUploadPipeline(options: UploadPipelineOptions): Promise<UploadPipelineResult> {
  const { signal, clock = systemClock } = options;
  // The source may fail before the pipeline is assembled (a file that cannot be opened), or be left unread when the
  // run is aborted at once: the pipeline reports its errors, so they must never surface as uncaught 'error' events.
  options.source.on('error', () => {});
  if (signal?.aborted) {
    options.source.destroy();
    throw abortReason(signal);
  }
  const raw = createByteCounter();
  const compress = options.precompressed ? undefined : createCompressStream(options.compression, { inProcess: options.smallSource === true });
  const encrypt = await createAgeEncryptStream(options.recipients);
  const stored = createHashTap();
  const throttle = createThrottle(options.bandwidthBytesPerSecond, clock);
  let stallError: Error | undefined;
  const watchdog = createStallWatchdog(
    options.stallTimeoutMs,
    () => {
      stallError = new Error(stallMessage(options.stallTimeoutMs));
      watchdog.destroy(stallError);
    },
    clock,
  );
  let uploadError: unknown;
  let uploaded: Awaited<ReturnType<typeof uploadStream>> | undefined;
  const rawProgress = options.precompressed?.rawProgress ?? (() => raw.bytes);
  const stopProgress = progressReporter(options.onProgress, () => [rawProgress(), stored.bytes]);
  const compressing = compress ? [...(compressesInProcess(options.compression) && !options.smallSource ? [createCoalescer()] : []), compress] : [];
  try {
    await pipelineAll(
      options.source,
      raw,
      ...compressing,
      encrypt,
      stored,
      throttle,
      watchdog,
      async (body: Readable) => {
        try {
          uploaded = await uploadStream(options.client, options.bucket, options.key, body, {
            partSizeBytes: options.partSizeBytes,
            concurrency: options.concurrency,
            signal,
            contentType: options.contentType ?? 'application/octet-stream',
          });
        } catch (error) {
          uploadError = error;
          throw error;
        }
      },
      signal ? { signal } : {},
    );
  } catch (error) {
    if (signal?.aborted) throw abortReason(signal);
    if (stallError) throw stallError;
    if (uploadError !== undefined && isTeardownError(error)) throw uploadError;
    throw error;
  } finally {
    stopProgress();
  }
  if (!uploaded) throw new Error(`upload of ${options.key} did not complete`);
  return { rawBytes: raw.bytes, storedBytes: stored.bytes, sha256: stored.digest(), parts: uploaded.parts, etag: uploaded.etag };
}

function checksumMismatch(key: string, expected: string, got: string): Error {
  return new Error(`checksum mismatch for ${key}: expected ${expected} got ${got}`);
}

/**
 * Downloads `bucket/key`, checks its SHA-256, decrypts and decompresses it into `sink`. Every age
 * chunk is authenticated before its plaintext moves on, so a corrupted or tampered object fails at
 * the first bad chunk (`<key> failed integrity checks: age: payload chunk N failed authentication
 * ...`); an object whose bytes decrypt but whose hash differs from the manifest fails with
 * `checksum mismatch for <key>: expected … got …` once the stream ended.
 */
export async function runDownloadPipeline(options: DownloadPipelineOptions): Promise<DownloadPipelineResult> {
  const { signal, clock = systemClock, key } = options;
  if (signal?.aborted) throw abortReason(signal);
  const decrypt = createAgeDecryptStream(options.identity);
  const decompress = createDecompressStream(options.compression);
  const body = await downloadStream(options.client, options.bucket, key);
  const stored = createHashTap();
  const throttle = createThrottle(options.bandwidthBytesPerSecond, clock);
  let stallError: Error | undefined;
  const watchdog = createStallWatchdog(
    options.stallTimeoutMs,
    () => {
      stallError = new Error(stallMessage(options.stallTimeoutMs));
      watchdog.destroy(stallError);
    },
    clock,
    // The sink (a database client) may stop reading for minutes while it builds an index.
    { pauseWhileBackpressured: true },
  );
  let decryptError: unknown;
  decrypt.once('error', (error) => {
    decryptError = error;
  });
  let decompressError: unknown;
  decompress.once('error', (error) => {
    decompressError = error;
  });
  const raw = createByteCounter();
  const stopProgress = progressReporter(options.onProgress, () => [raw.bytes, stored.bytes]);
  try {
    await pipelineAll(body, stored, throttle, watchdog, decrypt, decompress, raw, options.sink, signal ? { signal } : {});
  } catch (error) {
    if (signal?.aborted) throw abortReason(signal);
    if (stallError) throw stallError;
    if (decryptError !== undefined && !isTeardownError(decryptError) && (error === decryptError || isTeardownError(error))) {
      // The root cause is the decryptor's error even when the pipeline reports the teardown it caused.
      const cause = error === decryptError ? error : decryptError;
      // eslint-disable-next-line preserve-caught-error
      throw new Error(`${key} failed integrity checks: ${(cause as Error).message}`, { cause });
    }
    // A premature close handed to every stage by the pipeline is not the decompressor's own failure.
    if (decompressError !== undefined && error === decompressError && !isTeardownError(error)) {
      throw new Error(`${key} decrypted but does not decompress as ${options.compression}: ${(error as Error).message}`, { cause: error });
    }
    // The download resumes its own dropped connections (download.ts): a premature close left is the sink's.
    if (isTeardownError(error)) throw new Error(`the reader of ${key} closed before the download ended`, { cause: error });
    throw error;
  } finally {
    stopProgress();
  }
  const got = stored.digest();
  if (got !== options.expectedSha256.toLowerCase()) throw checksumMismatch(key, options.expectedSha256, got);
  return { storedBytes: stored.bytes, rawBytes: raw.bytes };
}

/** Reads `bucket/key` through SHA-256 and throws `checksum mismatch for <key>: ...` on a difference. */
export async function verifyObject(client: S3Client, bucket: string, key: string, expectedSha256: string, signal?: AbortSignal): Promise<void> {
  const body = await downloadStream(client, bucket, key);
  const tap = createHashTap();
  await pipeline(
    body,
    tap,
    async (source: AsyncIterable<Buffer>) => {
      for await (const _chunk of source) {
        // drain: the tap hashes
      }
    },
    signal ? { signal } : {},
  );
  const got = tap.digest();
  if (got !== expectedSha256.toLowerCase()) throw checksumMismatch(key, expectedSha256, got);
}
