import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { Readable, type Duplex } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { createCompressStream, createDecompressStream, resolveThreads, zstdBinary, ZSTD_LEVELS, type CompressionOptions } from '../src/zstd.ts';

/** Dump-like text: compressible, but not trivially (xorshift-driven, fast to make). */
function dumpLike(bytes: number): Buffer {
  const words = Array.from({ length: 512 }, () => randomBytes(2 + (randomBytes(1)[0]! % 8)).toString('hex'));
  let state = randomBytes(4).readUInt32LE() | 1;
  const next = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  const out = Buffer.allocUnsafe(bytes + 200);
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    size += out.write(`${i}\t${words[next() & 511]}\t${words[next() & 511]}\t${next() % 1_000_000}\t2024-0${1 + (next() % 9)}-1${next() % 10}\n`, size, 'latin1');
  }
  return out.subarray(0, bytes);
}

function* pieces(data: Buffer, max = 200_000): Generator<Buffer> {
  for (let offset = 0; offset < data.length; ) {
    const n = Math.min(data.length - offset, randomInt(1, max));
    yield data.subarray(offset, offset + n);
    offset += n;
  }
}

async function run(data: Buffer, stream: Duplex): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(Readable.from(pieces(data)), stream, async (s: AsyncIterable<Buffer>) => {
    for await (const c of s) out.push(c);
  });
  return Buffer.concat(out);
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe('zstd streams', () => {
  it('maps the policy levels to zstd levels', () => {
    expect(ZSTD_LEVELS).toEqual({ fastest: 1, default: 3, better: 7, best: 19 });
    expect(resolveThreads(0)).toBeGreaterThanOrEqual(1);
    expect(resolveThreads(3)).toBe(3);
    expect(() => resolveThreads(-1)).toThrow(/threads/);
  });

  const cases: CompressionOptions[] = [
    { algorithm: 'zstd', level: 'fastest', threads: 1 },
    { algorithm: 'zstd', level: 'default', threads: 1 },
    { algorithm: 'zstd', level: 'default', threads: 2 },
    { algorithm: 'zstd', level: 'better', threads: 0 },
    { algorithm: 'zstd', level: 'best', threads: 4 },
  ];
  for (const [options, engine] of cases.flatMap((c) => [[c, 'the zstd program'], [c, 'the built-in encoder']] as const)) {
    it(`zstd -d reads what we write (${options.level}, threads ${options.threads}, ${engine})`, async () => {
      const data = options.level === 'best' ? dumpLike(1_000_000) : dumpLike(14_000_000);
      if (engine === 'the zstd program') expect(zstdBinary()).toBeDefined();
      else process.env.STRATA_ZSTD = 'builtin';
      const compressed = await run(data, createCompressStream(options)).finally(() => delete process.env.STRATA_ZSTD);
      expect(compressed.length).toBeLessThan(data.length / 2);
      const cli = execFileSync('zstd', ['-d', '-c'], { input: compressed, maxBuffer: 64 << 20 });
      expect(sha(cli)).toBe(sha(data));
      expect(sha(await run(compressed, createDecompressStream('zstd')))).toBe(sha(data));
    });
  }

  it('random (incompressible) data and empty input round-trip through both encoders and the CLI', async () => {
    for (const threads of [1, 2]) {
      const data = randomBytes(9_000_001);
      const compressed = await run(data, createCompressStream({ algorithm: 'zstd', level: 'default', threads }));
      expect(execFileSync('zstd', ['-d', '-c'], { input: compressed, maxBuffer: 64 << 20 }).equals(data)).toBe(true);
      const empty = await run(Buffer.alloc(0), createCompressStream({ algorithm: 'zstd', level: 'default', threads }));
      expect(empty.length).toBeGreaterThan(0);
      expect(execFileSync('zstd', ['-d', '-c'], { input: empty })).toHaveLength(0);
      expect(await run(empty, createDecompressStream('zstd'))).toHaveLength(0);
    }
  });

  it('we read what the zstd CLI writes', async () => {
    const data = dumpLike(3_000_000);
    for (const level of ['-1', '-3', '-12']) {
      const compressed = execFileSync('zstd', [level, '-c', '-T2'], { input: data, maxBuffer: 64 << 20 });
      expect((await run(compressed, createDecompressStream('zstd'))).equals(data)).toBe(true);
    }
  });

  it('none passes bytes through; corrupt input fails to decompress', async () => {
    const data = randomBytes(100_000);
    expect((await run(data, createCompressStream({ algorithm: 'none', level: 'default', threads: 1 }))).equals(data)).toBe(true);
    expect((await run(data, createDecompressStream('none'))).equals(data)).toBe(true);
    const compressed = await run(dumpLike(100_000), createCompressStream({ algorithm: 'zstd', level: 'default', threads: 1 }));
    const at = Math.floor(compressed.length / 2);
    compressed[at] = compressed[at]! ^ 0xff;
    await expect(run(compressed, createDecompressStream('zstd'))).rejects.toThrow();
  });
});
