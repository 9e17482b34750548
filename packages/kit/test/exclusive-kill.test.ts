import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, expect, it } from 'vitest';
import { createExclusiveWork, type ExclusiveWork } from '../src/db/index.ts';
import { silentLogger, testPostgresAdminUrl } from '../src/testing.ts';

/**
 * A scheduler's or reaper's pass runs on one replica at a time (a session advisory lock). When the replica holding it
 * is killed with -9 mid-pass, nothing of it runs any more: the kernel closes its connection, Postgres ends the session
 * and frees the lock, and another replica takes the next pass. Here the holder is a real process killed for real.
 */
const HOLDER = path.join(import.meta.dirname, 'fixtures', 'hold-exclusive.ts');
let replica: ExclusiveWork | undefined;
afterEach(async () => {
  await replica?.close();
  replica = undefined;
});

function startHolder(name: string) {
  const child = spawn(process.execPath, [HOLDER, testPostgresAdminUrl(), name], { stdio: ['ignore', 'pipe', 'inherit'] });
  const holding = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('held') && resolve());
    child.on('exit', (code, signal) => reject(new Error(`the holder exited (${code ?? signal}) before it held the pass`)));
  });
  const exited = new Promise<string | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  return { child, holding, exited };
}

it('hands the pass to another replica once the replica holding it is killed with -9', async () => {
  const name = `exclusive-kill-${process.pid}-${Date.now()}`;
  const holder = startHolder(name);
  await holder.holding;
  replica = await createExclusiveWork(testPostgresAdminUrl(), silentLogger());
  expect(await replica.tryExclusive(name, async () => 'taken'), 'not while the holder lives').toEqual({ ran: false });

  holder.child.kill('SIGKILL');
  expect(await holder.exited).toBe('SIGKILL');
  // Postgres ends the session when it reads the closed connection: at once on loopback, polled within bounds here.
  let outcome: { ran: boolean; value?: string } = { ran: false };
  for (let tries = 0; tries < 100 && !outcome.ran; tries++) {
    outcome = await replica.tryExclusive(name, async () => 'taken');
    if (!outcome.ran) await sleep(50);
  }
  expect(outcome).toEqual({ ran: true, value: 'taken' });
});
