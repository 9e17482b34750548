import { randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Random bytes are drawn 4 KiB at a time: one system call per ~100 ids instead of one per id. */
const pool = Buffer.alloc(4096);
let offset = pool.length;

function randomByte(): number {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  return pool[offset++] as number;
}

/** `length` uniformly random base62 characters (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}
