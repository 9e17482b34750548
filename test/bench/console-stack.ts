// The stack's processes as the console bench reports them: the Node flags they run with, their peak memory, and,
// when a step fails, which of them died and the last line each wrote (a service out of heap dies in a step's middle).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Stack } from '@sigil/local-stack';
import { serviceNodeFlags } from '@sigil/local-stack';

/** The V8 flags every service runs with (`STACK_NODE_FLAGS` replaces the stack's defaults). */
export const serviceFlags = () =>
  process.env.STACK_NODE_FLAGS
    ? `${serviceNodeFlags().join(' ')} (STACK_NODE_FLAGS)`
    : `${serviceNodeFlags().join(' ')} (the stack's defaults; the catalog ${serviceNodeFlags('backup-catalog').join(' ')}, the gateway ${serviceNodeFlags('gateway').join(' ')})`;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The processes that are gone, each with the last lines of its log that are not a native stack frame. */
export async function deadProcesses(stack: Stack, stateDir: string): Promise<string[]> {
  const dead = stack.processes.filter((one) => !alive(one.pid));
  return Promise.all(
    dead.map(async (one) => {
      const file = path.join(stateDir, 'logs', `${one.name}.log`);
      const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((line) => line.trim() && !/^\s*\d+: 0x/.test(line));
      return `${one.name} (pid ${one.pid}) exited; the end of ${file}: ${lines.slice(-3).join(' | ').slice(0, 600)}`;
    }),
  );
}

/** A process of the stack is gone; the message has the end of each dead one's log. */
export class StackProcessDied extends Error {
  constructor(lines: string[]) {
    super(`a process of the stack died:\n${lines.join('\n')}`);
  }
}

/**
 * Rejects as soon as a process of the stack is gone (checked every 2 s), saying which and how it ended: a service out
 * of heap would otherwise show only as a later step's timeout (the page's capture waits 5 minutes, three times).
 */
export function watchForDeath(stack: Stack, stateDir: string): { died: Promise<never>; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const died = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      if (stack.processes.every((one) => alive(one.pid))) return;
      clearInterval(timer);
      void deadProcesses(stack, stateDir).then((lines) => reject(new StackProcessDied(lines)));
    }, 2000);
  });
  // Nobody may be waiting on it when the bench ends another way.
  died.catch(() => undefined);
  return { died, stop: () => clearInterval(timer) };
}

/** Peak resident memory (VmHWM) of the named processes, in MiB. */
export async function peakRss(stack: Stack, names: string[]): Promise<string> {
  const peaks = await Promise.all(
    stack.processes
      .filter((one) => names.includes(one.name))
      .map(async (one) => {
        const status = await readFile(`/proc/${one.pid}/status`, 'utf8').catch(() => '');
        const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
        return `${one.name} ${Number.isNaN(kb) ? 'gone' : `${(kb / 1024).toFixed(1)} MiB`}`;
      }),
  );
  return peaks.join(', ');
}

/**
 * CPU milliseconds a second the processes spend while nobody asks them anything (their timers: the scheduler,
 * retention, the mirror, change-log reports), each process's, measured over `seconds`: the CPU a request costs is net of it.
 */
export async function idleCpuRate(cpuMs: () => Promise<number[]>, seconds: number): Promise<number[]> {
  const before = await cpuMs();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return (await cpuMs()).map((after, i) => (after - (before[i] as number)) / seconds);
}
