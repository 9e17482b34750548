import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cutAt } from '../src/jobs/segment-fetch.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'segment-cut-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function fileOf(name: string, bytes: Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
}

describe('a complete upload cut where a partial upload of its file ended', () => {
  it('keeps a WAL file its size, its bytes up to the partial end, and zeros after it', () => {
    const size = 1024 * 1024; // a 1 MiB WAL segment size: file 00000001000000000000000B starts at 0/B00000
    const file = fileOf('00000001000000000000000B', Buffer.alloc(size, 0xab));
    cutAt(file, '00000001000000000000000B', '0/B00120');
    const bytes = fs.readFileSync(file);
    expect(bytes.length).toBe(size);
    expect(bytes.subarray(0, 0x120).every((b) => b === 0xab)).toBe(true);
    expect(bytes.subarray(0x120).every((b) => b === 0)).toBe(true);
  });

  it('truncates a binlog at the offset of the partial end', () => {
    const file = fileOf('mysql-bin.000007', Buffer.alloc(5000, 1));
    cutAt(file, 'mysql-bin.000007', 'mysql-bin.000007:1234');
    expect(fs.statSync(file).size).toBe(1234);
  });

  it('refuses an end that lies in another file', () => {
    const wal = fileOf('000000010000000000000002', Buffer.alloc(16 * 1024 * 1024));
    expect(() => cutAt(wal, '000000010000000000000002', '0/3000010')).toThrow(/ends outside it/);
    const binlog = fileOf('mysql-bin.000008', Buffer.alloc(10));
    expect(() => cutAt(binlog, 'mysql-bin.000008', 'mysql-bin.000009:4')).toThrow(/ends in another file/);
  });
});
