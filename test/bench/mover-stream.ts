/**
 * Throughput of the mover's compress + encrypt path, on demand:
 *
 *   node_modules/.bin/node test/bench/mover-stream.ts [GiB]
 *
 * 1. Our pipeline (node:zlib zstd → STREAM age on node:crypto → SHA-256 tap) over 1 GiB of
 *    generated dump-like data, with one zstd thread and with parallel frames; and age alone.
 * 2. The pure-JS `age-encryption` package's encryptor on a smaller input (it buffers it whole).
 * 3. The CLI equivalent: `zstd -3 | age -r ...`.
 * Prints MB/s (of raw input), the compression ratio and the process's peak RSS after each step.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Encrypter } from 'age-encryption';
import { createAgeEncryptStream, generateAgeIdentity } from '@strata/stream/age';
import { createHashTap } from '@strata/stream/taps';
import { createCompressStream, type CompressionOptions } from '@strata/stream/zstd';

const MiB = 1024 * 1024;
const total = Math.round(Number(process.argv[2] ?? 1) * 1024) * MiB;
const CHUNK = 256 * 1024;

/** 32 MiB of dump-like rows (COPY text format), some of them with random (incompressible) bytes. */
function makePool(): Buffer {
  const size = 32 * MiB;
  const pool = Buffer.allocUnsafe(size + 4096);
  const names = Array.from({ length: 1000 }, (_, i) => `customer-${i}-${randomBytes(4).toString('hex')}`);
  let state = 0x9e3779b9;
  const next = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  let at = 0;
  for (let row = 0; at < size; row++) {
    if (row % 50 === 0) {
      at += pool.write(`${row}\t\\\\x${randomBytes(48).toString('hex')}\n`, at, 'latin1');
    } else {
      at += pool.write(`${row}\t${names[next() % 1000]}\t${next() % 100000}.${next() % 100}\t2024-${1 + (next() % 12)}-${1 + (next() % 28)} 12:${next() % 60}:00\tactive\n`, at, 'latin1');
    }
  }
  return pool.subarray(0, size);
}

const pool = makePool();

/** `bytes` of data cut from the pool at shifting offsets, in 256 KiB chunks. */
function source(bytes: number): Readable {
  let produced = 0;
  let offset = 0;
  return new Readable({
    highWaterMark: CHUNK,
    read() {
      if (produced >= bytes) return void this.push(null);
      const n = Math.min(CHUNK, bytes - produced);
      if (offset + n > pool.length) offset = (offset + 7919) % (pool.length - CHUNK);
      this.push(pool.subarray(offset, offset + n));
      offset += n;
      produced += n;
    },
  });
}

function counter(): { stream: Writable; bytes: () => number } {
  let n = 0;
  return {
    stream: new Writable({
      highWaterMark: CHUNK,
      write(chunk: Buffer, _e, cb) {
        n += chunk.length;
        cb();
      },
    }),
    bytes: () => n,
  };
}

const rssMiB = (): string => `${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`;
const mbps = (bytes: number, ms: number): string => `${(bytes / 1e6 / (ms / 1000)).toFixed(0)} MB/s`;

function report(label: string, raw: number, stored: number, ms: number): void {
  const ratio = stored > 0 ? (raw / stored).toFixed(2) : '-';
  console.log(`${label.padEnd(48)} ${mbps(raw, ms).padStart(10)}   ratio ${ratio.padStart(5)}   ${(ms / 1000).toFixed(2)} s   peak RSS ${rssMiB()}`);
}

async function ours(label: string, bytes: number, compression: CompressionOptions, recipients: string[]): Promise<void> {
  const out = counter();
  const tap = createHashTap();
  const start = performance.now();
  await pipeline(source(bytes), createCompressStream(compression), await createAgeEncryptStream(recipients), tap, out.stream);
  report(label, bytes, out.bytes(), performance.now() - start);
}

async function cli(label: string, bytes: number, recipient: string): Promise<void> {
  const child = spawn('sh', ['-c', `zstd -3 -q -c | age -r ${recipient} | wc -c`], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const start = performance.now();
  await pipeline(source(bytes), child.stdin);
  const code = await exited;
  if (code !== 0) throw new Error(`${label}: exit ${code}`);
  report(label, bytes, Number(output.trim()), performance.now() - start);
}

async function main(): Promise<void> {
  const { recipient } = await generateAgeIdentity();
  const recipients = [recipient, (await generateAgeIdentity()).recipient];
  console.log(`mover stream bench: ${total / MiB} MiB of dump-like data, ${os.availableParallelism()} CPUs, node ${process.version}, UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? '(default 4)'}`);
  console.log(`peak RSS before: ${rssMiB()} (includes the 32 MiB data pool)`);

  await ours('ours: age only (no compression)', total, { algorithm: 'none', level: 'default', threads: 1 }, recipients);
  await ours('ours: zstd default, 1 thread + age', total, { algorithm: 'zstd', level: 'default', threads: 1 }, recipients);
  await ours('ours: zstd default, threads 0 (frames) + age', total, { algorithm: 'zstd', level: 'default', threads: 0 }, recipients);
  await ours('ours: zstd fastest, threads 0 (frames) + age', total, { algorithm: 'zstd', level: 'fastest', threads: 0 }, recipients);

  await cli('CLI: zstd -3 | age', total, recipient);

  const small = Math.min(total, 128 * MiB);
  const data = Buffer.concat([pool, pool, pool, pool]).subarray(0, small);
  const encrypter = new Encrypter();
  for (const r of recipients) encrypter.addRecipient(r);
  const start = performance.now();
  const sealed = await encrypter.encrypt(data);
  report(`age-encryption package: age only, ${small / MiB} MiB`, small, sealed.length, performance.now() - start);
  await ours(`ours: age only, same ${small / MiB} MiB`, small, { algorithm: 'none', level: 'default', threads: 1 }, recipients);
}

const started = performance.now();
await main();
console.log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
