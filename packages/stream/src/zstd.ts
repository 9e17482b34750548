/**
 * zstd compression on node:zlib (Node 24), no native addon.
 *
 * Levels (the policy's `compression.level`):
 *   fastest = 1   default = 3 (zstd's own default)   better = 7   best = 19
 * Level 19 is about ten times slower than 3 for a few percent smaller output; 20-22 ("ultra")
 * need large windows and memory on the restore side too, so `best` stops at 19.
 *
 * Threads: libzstd's own multithreading (`ZSTD_c_nbWorkers`) is compiled into Node's bundled zstd
 * but node:zlib's stream driver mishandles it: with workers the encoder may leave input unconsumed
 * while output space remains, which node:zlib takes for the end of the stream, so it drops data or
 * throws `stream.push() after EOF` (nodejs/node#59899; reproduced on 24.21 with any write size
 * that does not divide the job size). We therefore never set nbWorkers. `threads > 1` instead cuts
 * the input into independent blocks and compresses up to `threads` of them at once on the libuv
 * thread pool (zlib's async API), writing the frames in order: the output is a concatenation of
 * zstd frames, which every zstd decoder (the CLI, node:zlib) reads as one stream. Real parallelism
 * is bounded by the pool size (`UV_THREADPOOL_SIZE`, default 4, fixed at process start), so the
 * number of blocks in flight is min(threads, pool size); memory is about that many blocks (plus
 * their compressed output) and one being filled. `threads: 1` uses one streaming encoder (itself
 * running off the main thread); `threads: 0` means one per CPU (os.availableParallelism()).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Duplex, PassThrough, Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';

export type CompressionAlgorithm = 'zstd' | 'none';
export type CompressionLevel = 'fastest' | 'default' | 'better' | 'best';

export interface CompressionOptions {
  algorithm: CompressionAlgorithm;
  level: CompressionLevel;
  /** 0 = one per CPU; 1 = one streaming encoder; more = independent frames compressed in parallel. */
  threads: number;
}

export const ZSTD_LEVELS: Readonly<Record<CompressionLevel, number>> = { fastest: 1, default: 3, better: 7, best: 19 };

/** Output chunk size of the zlib streams (node's default is 16 KiB). */
const ZLIB_CHUNK = 64 * 1024;

export function zstdLevel(level: CompressionLevel): number {
  const n = ZSTD_LEVELS[level];
  if (n === undefined) throw new Error(`unknown compression level ${JSON.stringify(level)}`);
  return n;
}

/** Threads actually requested: 0 becomes one per CPU. */
export function resolveThreads(threads: number): number {
  if (!Number.isInteger(threads) || threads < 0) throw new Error(`compression threads must be an integer >= 0, got ${threads}`);
  return threads === 0 ? os.availableParallelism() : threads;
}

/** Size of the libuv thread pool that zlib's async work runs on. */
export function threadPoolSize(): number {
  const n = Number(process.env.UV_THREADPOOL_SIZE);
  return Number.isInteger(n) && n > 0 ? Math.min(n, 1024) : 4;
}

function zstdParams(level: number): Record<number, number> {
  return {
    [zlib.constants.ZSTD_c_compressionLevel]: level,
    // A content checksum per frame, as the zstd CLI writes by default: decoders verify it.
    [zlib.constants.ZSTD_c_checksumFlag]: 1,
  };
}

/** Independent block size of the parallel encoder: several windows, so the ratio barely suffers. */
function blockSizeFor(level: number): number {
  return level >= 17 ? 16 * 1024 * 1024 : level >= 6 ? 8 * 1024 * 1024 : 4 * 1024 * 1024;
}

function compressBlock(block: Buffer, level: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zlib.zstdCompress(block, { params: zstdParams(level) }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

function createParallelZstd(level: number, inFlight: number, blockSize: number): Transform {
  let block = Buffer.allocUnsafe(blockSize);
  let filled = 0;
  let frames = 0;
  const queue: Promise<Buffer>[] = [];

  const submit = (data: Buffer): void => {
    const job = compressBlock(data, level);
    job.catch(() => {}); // awaited in order below; never unhandled when the stream is destroyed
    queue.push(job);
    frames++;
  };

  return new Transform({
    writableHighWaterMark: ZLIB_CHUNK,
    readableHighWaterMark: ZLIB_CHUNK,
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      void (async () => {
        let offset = 0;
        while (offset < chunk.length) {
          const n = chunk.copy(block, filled, offset);
          filled += n;
          offset += n;
          if (filled === blockSize) {
            submit(block);
            block = Buffer.allocUnsafe(blockSize);
            filled = 0;
            while (queue.length >= inFlight) this.push(await queue.shift()!);
          }
        }
      })().then(() => callback(), callback);
    },
    flush(callback: TransformCallback) {
      void (async () => {
        // Empty input still yields one (empty) frame, so the output is a valid zstd stream.
        if (filled > 0 || frames === 0) submit(block.subarray(0, filled));
        while (queue.length > 0) this.push(await queue.shift()!);
      })().then(() => callback(), callback);
    },
  });
}

/**
 * True when `createCompressStream` compresses on node:zlib, whose per-write cost makes larger writes pay (the
 * pipeline then gathers the source's pipe reads into 1 MiB blocks); the zstd program and `none` take any size.
 */
export function compressesInProcess(options: CompressionOptions): boolean {
  return options.algorithm === 'zstd' && zstdBinary() === undefined;
}

/**
 * The compressing stage of the pipeline (a PassThrough for `none`). `inProcess` keeps a source of a few kilobytes
 * (an inventory) off the zstd program, whose start costs more than the work.
 */
export function createCompressStream(options: CompressionOptions, { inProcess = false }: { inProcess?: boolean } = {}): Transform | Duplex {
  if (options.algorithm === 'none') return new PassThrough();
  if (options.algorithm !== 'zstd') throw new Error(`unknown compression algorithm ${JSON.stringify(options.algorithm)}`);
  const level = zstdLevel(options.level);
  const threads = resolveThreads(options.threads);
  const binary = inProcess ? undefined : zstdBinary();
  if (binary) return createZstdProcess(binary, level, threads);
  if (threads <= 1 || inProcess) return zlib.createZstdCompress({ chunkSize: ZLIB_CHUNK, params: zstdParams(level) });
  return createParallelZstd(level, Math.min(threads, threadPoolSize()), blockSizeFor(level));
}

/** The decompressing stage of a restore (a PassThrough for `none`); reads concatenated frames. */
export function createDecompressStream(algorithm: CompressionAlgorithm): Transform {
  if (algorithm === 'none') return new PassThrough();
  if (algorithm !== 'zstd') throw new Error(`unknown compression algorithm ${JSON.stringify(algorithm)}`);
  return zlib.createZstdDecompress({ chunkSize: ZLIB_CHUNK });
}

let foundBinary: string | null | undefined;

/**
 * The zstd program, when installed and not switched off (`STRATA_ZSTD=builtin`): it compresses with about a third
 * less CPU per byte than the zlib binding of Node (test/bench/strata-pitr.ts), in a process of its own.
 */
export function zstdBinary(): string | undefined {
  if (process.env.STRATA_ZSTD === 'builtin') return undefined;
  if (foundBinary === undefined) {
    foundBinary = null;
    for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
      const candidate = path.join(dir, 'zstd');
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        foundBinary = candidate;
        break;
      } catch {
        // not here
      }
    }
  }
  return foundBinary ?? undefined;
}

/**
 * The zstd program as a filter that reads another program's output through a pipe of their own, so the raw bytes
 * never pass through this process; undefined when the program is absent or off, or for `none`. With `-vv` it tells
 * on stderr the input bytes consumed so far (`zstdConsumed`) and at the end the exact bytes it read and wrote
 * (`zstdTotals`).
 */
export function zstdFilter(options: CompressionOptions): { command: string; args: string[] } | undefined {
  if (options.algorithm !== 'zstd') return undefined;
  const binary = zstdBinary();
  if (!binary || !countsInBytes(binary)) return undefined;
  return { command: binary, args: [`-${zstdLevel(options.level)}`, `-T${resolveThreads(options.threads)}`, '-c', '-vv', '--progress'] };
}

const byteCounting = new Map<string, boolean>();

/** zstd 1.5 and later print exact byte counts at `-vv` (1.4 prints `N => M bytes` and sizes in MB). */
function countsInBytes(binary: string): boolean {
  let known = byteCounting.get(binary);
  if (known === undefined) {
    const version = /v(\d+)\.(\d+)\.\d+/.exec(spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout ?? '');
    known = version !== null && (Number(version[1]) > 1 || (Number(version[1]) === 1 && Number(version[2]) >= 5));
    byteCounting.set(binary, known);
  }
  return known;
}

/** The progress lines of `zstd -vv --progress` (`(L3) Buffered:0 B - Consumed:1048576 B - Compressed:...`). */
export const ZSTD_PROGRESS_LINE = /^\(L-?\d+\) Buffered:/;

/** The input bytes a `zstd -vv --progress` run had consumed at its latest complete progress line in `stderr`. */
export function zstdConsumed(stderr: string): number | undefined {
  // Called for every progress line of a long run: look at the last report only, not at the whole text.
  for (let at = stderr.lastIndexOf('Consumed:'); at !== -1; at = stderr.lastIndexOf('Consumed:', at - 1)) {
    const found = /^Consumed:\s*(\d+) B/.exec(stderr.slice(at, at + 40));
    if (found) return Number(found[1]);
  }
  return undefined;
}

/** The bytes a `zstd -vv` run read and wrote, from its closing line: `/*stdin*\ : 30.41% (445644800 B => 135518237 B, /*stdout*\)`. */
export function zstdTotals(stderr: string): { readBytes: number; writtenBytes: number } | undefined {
  const found = [...stderr.matchAll(/\(\s*(\d+) B =>\s*(\d+) B\b/g)].at(-1);
  return found ? { readBytes: Number(found[1]), writtenBytes: Number(found[2]) } : undefined;
}

/** `zstd -<level> -T<threads>` as a stream stage: a frame with a content checksum, as the built-in one writes. */
function createZstdProcess(binary: string, level: number, threads: number): Duplex {
  const child = spawn(binary, [`-${level}`, `-T${threads}`, '-q', '-c', '--no-progress'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let said = '';
  child.stderr.on('data', (chunk: Buffer) => (said = (said + chunk.toString('utf8')).slice(-2000)));
  const stage = Duplex.from({ writable: child.stdin, readable: child.stdout });
  child.stdin.on('error', () => {}); // EPIPE when zstd exits early: its exit status says why
  child.once('error', (error) => stage.destroy(new Error(`zstd could not start: ${error.message}`)));
  child.once('close', (code, signal) => {
    if (code !== 0 && !stage.destroyed) stage.destroy(new Error(`zstd: ${said.trim() || `exited with ${code ?? signal}`}`));
  });
  stage.once('close', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return stage;
}
