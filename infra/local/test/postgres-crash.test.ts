import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { discardAfterMachineCrash } from '../src/postgres.ts';

function dataDirWithLock(lockedAt?: Date): string {
  const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pg-crash-')), 'postgres');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'PG_VERSION'), '15\n');
  if (lockedAt) {
    fs.writeFileSync(path.join(dir, 'postmaster.pid'), '4242\n');
    fs.utimesSync(path.join(dir, 'postmaster.pid'), lockedAt, lockedAt);
  }
  return dir;
}

describe('a throwaway Postgres (no fsync) after a crash', () => {
  const bootedAt = Date.parse('2026-11-26T04:00:00Z');
  const said: string[] = [];
  const log = (line: string) => void said.push(line);

  it('discards a data directory whose server was running when the machine went down', () => {
    const dir = dataDirWithLock(new Date('2026-11-25T23:00:00Z'));
    expect(discardAfterMachineCrash(dir, log, bootedAt)).toBe(true);
    expect(fs.existsSync(dir)).toBe(false);
    expect(said.at(-1)).toMatch(/was running without fsync when the machine went down; starting afresh/);
  });

  it('keeps one whose server only crashed (or still runs) since the machine started, and one stopped cleanly', () => {
    const crashed = dataDirWithLock(new Date('2026-11-26T04:30:00Z'));
    expect(discardAfterMachineCrash(crashed, log, bootedAt)).toBe(false);
    expect(fs.existsSync(path.join(crashed, 'PG_VERSION'))).toBe(true);
    const clean = dataDirWithLock();
    expect(discardAfterMachineCrash(clean, log, bootedAt)).toBe(false);
    expect(fs.existsSync(path.join(clean, 'PG_VERSION'))).toBe(true);
  });
});
