import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureInfra } from '../src/index.ts';
import type { Infra } from '../src/index.ts';
import { probeNats } from '../src/nats.ts';
import { probePostgres } from '../src/postgres.ts';
import { alive, processTree, readPid, removeDir, tempStateDir } from './helpers.ts';

/** Run the fixture in a separate Node process until it reports READY. */
async function startInChild(stateDir: string): Promise<{ pid: number; urls: { postgres: string; nats: string } }> {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'fixtures', 'start-and-hang.ts'), stateDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return await new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /READY (.*)\n/.exec(out);
      if (match?.[1]) resolve({ pid: child.pid as number, urls: JSON.parse(match[1]) as { postgres: string; nats: string } });
    });
    child.once('exit', (code) => reject(new Error(`fixture exited with ${code}: ${err}`)));
  });
}

describe('servers left behind by a run that was killed', () => {
  const stateDir = tempStateDir();
  let infra: Infra | undefined;
  afterAll(async () => {
    await infra?.stop();
    removeDir(stateDir);
  });

  it('are taken over by the next run and stopped by its stop()', { timeout: 60_000 }, async () => {
    const first = await startInChild(stateDir);
    const postmaster = readPid(path.join(stateDir, 'postgres', 'postmaster.pid'));
    const natsServer = readPid(path.join(stateDir, 'nats.pid'));
    process.kill(first.pid, 'SIGKILL'); // no exit hook runs: the servers stay up
    // Wait (bounded) until the killed launcher is really gone, then check its servers outlived it.
    for (let i = 0; i < 200 && alive(first.pid); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(alive(first.pid)).toBe(false);
    expect(alive(postmaster) && alive(natsServer)).toBe(true);

    const lines: string[] = [];
    infra = await ensureInfra({ stateDir, env: {}, log: (l) => lines.push(l) });
    expect(infra.postgres.adminUrl).toBe(first.urls.postgres);
    expect(infra.nats.url).toBe(first.urls.nats);
    expect(lines.filter((l) => l.includes('took over'))).toHaveLength(2);
    expect(await probePostgres(infra.postgres.adminUrl)).toBeUndefined();
    expect(await probeNats(infra.nats.url)).toBeUndefined();

    const pids = processTree([postmaster, natsServer]);
    await infra.stop();
    expect(pids.filter(alive)).toEqual([]);
  });
});
