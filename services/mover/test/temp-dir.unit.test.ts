import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configureTempDir, jobTempDir } from '../src/temp-dir.ts';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mover-temp-'));
// The module's folder is process-wide and workers run file after file: the default comes back.
afterAll(() => {
  configureTempDir(os.tmpdir());
  fs.rmSync(base, { recursive: true, force: true });
});

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

describe("the mover's work folders", () => {
  it('puts each job in a folder of its own under this process\'s folder', () => {
    configureTempDir(base);
    const first = jobTempDir('strata-wal-');
    const second = jobTempDir('strata-wal-');
    expect(path.dirname(first)).toBe(path.join(base, `strata-mover-${process.pid}`));
    expect(first).not.toBe(second);
    fs.rmSync(first, { recursive: true });
    fs.rmSync(second, { recursive: true });
  });

  it('removes what dead movers left, keeps a live one\'s, and empties its own stale folder', () => {
    const dead = path.join(base, `strata-mover-${deadPid()}`);
    const live = path.join(base, `strata-mover-${process.ppid}`);
    const own = path.join(base, `strata-mover-${process.pid}`);
    for (const dir of [dead, live, own]) fs.mkdirSync(path.join(dir, 'strata-wal-x'), { recursive: true });
    fs.writeFileSync(path.join(dead, 'strata-wal-x', '000000010000000000000001.partial'), 'wal');
    fs.writeFileSync(path.join(own, 'strata-wal-x', '000000010000000000000002.partial'), 'wal');
    const other = path.join(base, 'someone-else');
    fs.mkdirSync(other);

    const removed = configureTempDir(base);

    expect(removed.sort()).toEqual([path.basename(dead), path.join(path.basename(own), 'strata-wal-x')].sort());
    expect(fs.existsSync(dead)).toBe(false);
    expect(fs.readdirSync(own)).toEqual([]);
    expect(fs.readdirSync(live)).toEqual(['strata-wal-x']);
    expect(fs.existsSync(other)).toBe(true);
  });
});
