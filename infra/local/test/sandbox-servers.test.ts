import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stopSandboxServers } from '../src/sandbox-servers.ts';
import { alive } from './helpers.ts';

/** A detached process started on a data folder, as the sandbox runtime starts a server; `ignoreInt` stands for mariadbd. */
function server(dataDir: string, ignoreInt = false) {
  const code = `${ignoreInt ? "process.on('SIGINT', () => {});" : ''} setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', code, '--', '-D', dataDir], { detached: true, stdio: 'ignore' });
  child.unref();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { pid: child.pid!, exited };
}

describe("the stack's stop", () => {
  it('stops the servers started on data under its sandbox folder, and only those', async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), 'stack-sbx-'));
    const sandboxes = path.join(stateDir, 'sandboxes');
    mkdirSync(path.join(sandboxes, 'sbx_1'), { recursive: true });
    const postgres = server(path.join(sandboxes, 'sbx_1', 'data'));
    const stubborn = server(path.join(sandboxes, 'sbx_2', 'data'), true);
    const elsewhere = server(path.join(stateDir, 'sandboxes-other', 'data'));
    try {
      expect(await stopSandboxServers(sandboxes, 1000)).toBe(2);
      await Promise.all([postgres.exited, stubborn.exited]);
      expect(alive(elsewhere.pid)).toBe(true);
    } finally {
      process.kill(elsewhere.pid, 'SIGKILL');
    }
  });
});
