// The stack's Node processes (services, their replicas, the gateway): started, watched, restarted when they die.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { serviceNodeFlags } from './node-flags.ts';

const repoRoot = path.resolve(import.meta.dirname, '../../..');

/** The first restart waits this long, each next one twice as long, up to the cap; a process up for a while starts over. */
const RESTART_DELAY_MS = 250;
const RESTART_DELAY_CAP_MS = 4_000;
const STABLE_AFTER_MS = 10_000;

export interface ProcessSpec {
  /** `envelopes` for a service's first replica, `envelopes#2` for its second, `gateway`. */
  name: string;
  /** Which service's Node flags it runs with. */
  service: string;
  /** Entry module, relative to the repository root. */
  entry: string;
  env: Record<string, string>;
}

export interface Supervisor {
  /** Live view: the pid changes in place when a process is restarted. */
  readonly processes: Array<{ name: string; pid: number }>;
  start(spec: ProcessSpec): Promise<void>;
  /** The process's address (from its LISTEN_URL_FILE), once `/readyz` answers there. */
  waitReady(name: string, timeoutMs?: number): Promise<string>;
  killAndRestart(name: string): Promise<{ oldPid: number; newPid: number }>;
  /** Stops every process, newest first; nothing is restarted from then on. */
  stopAll(): Promise<void>;
}

interface Supervised {
  spec: ProcessSpec;
  child: ChildProcess;
  view: { name: string; pid: number };
  startedAt: number;
  restarts: number;
  /** Once known, the port a restart binds again, so the gateway's and the other services' addresses stay right. */
  port?: string;
  pendingRestart?: NodeJS.Timeout;
}

export function createSupervisor(options: { stateDir: string; log: (line: string) => void }): Supervisor {
  const { stateDir, log } = options;
  const supervised = new Map<string, Supervised>();
  const processes: Array<{ name: string; pid: number }> = [];
  let stopping = false;

  const entryOf = (name: string): Supervised => {
    const entry = supervised.get(name);
    if (!entry) throw new Error(`the stack runs no process named ${JSON.stringify(name)} (it runs ${[...supervised.keys()].join(', ')})`);
    return entry;
  };

  async function launch(entry: Supervised): Promise<void> {
    const env = entry.port ? { ...entry.spec.env, PORT: entry.port } : entry.spec.env;
    entry.child = await startNode(stateDir, entry.spec, env);
    entry.view.pid = entry.child.pid ?? -1;
    entry.startedAt = Date.now();
    entry.child.once('exit', (code, signal) => onExit(entry, entry.child, code, signal));
  }

  function onExit(entry: Supervised, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (stopping || entry.child !== child) return;
    if (Date.now() - entry.startedAt > STABLE_AFTER_MS) entry.restarts = 0;
    const delay = Math.min(RESTART_DELAY_CAP_MS, RESTART_DELAY_MS * 2 ** entry.restarts);
    entry.restarts += 1;
    log(`${entry.spec.name} (pid ${child.pid}) exited (${signal ?? `code ${code}`}); restarting it in ${delay} ms${entry.port ? ` on port ${entry.port}` : ''}`);
    entry.pendingRestart = setTimeout(() => {
      entry.pendingRestart = undefined;
      if (stopping) return;
      launch(entry).then(
        () => log(`${entry.spec.name} restarted (pid ${entry.view.pid})`),
        (error: unknown) => log(`${entry.spec.name} could not be restarted: ${(error as Error).message}`),
      );
    }, delay);
  }

  // Generous: a stack of two replicas starts twenty-odd processes at once, which on a busy two-core machine takes minutes.
  async function waitReady(name: string, timeoutMs = 180_000): Promise<string> {
    const entry = entryOf(name);
    const deadline = Date.now() + timeoutMs;
    const file = listenFile(stateDir, name);
    while (Date.now() < deadline) {
      const child = entry.child;
      // A dead process is only an error before the first start finished: later the supervisor brings it back.
      if (!entry.port && child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode}; see .local logs/${name}.log`);
      const url = existsSync(file) ? (await readFile(file, 'utf8')).trim() || undefined : undefined;
      try {
        if (url && child.exitCode === null && child.signalCode === null && (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) })).ok) {
          entry.port ??= new URL(url).port;
          return url;
        }
      } catch {
        // not ready yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${name} was not ready within ${timeoutMs} ms; see .local logs/${name}.log`);
  }

  return {
    processes,
    async start(spec) {
      if (supervised.has(spec.name)) throw new Error(`${spec.name} is already started`);
      const view = { name: spec.name, pid: -1 };
      const entry = { spec, view, startedAt: 0, restarts: 0 } as unknown as Supervised;
      await launch(entry);
      supervised.set(spec.name, entry);
      processes.push(view);
    },
    waitReady,
    async killAndRestart(name) {
      const entry = entryOf(name);
      if (!entry.port) await waitReady(name);
      const oldPid = entry.view.pid;
      const old = entry.child;
      const exited = old.exitCode !== null || old.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => old.once('exit', () => resolve()));
      old.kill('SIGKILL');
      await exited;
      // The listen file names the old process's address until the new one writes it: wait for the new pid first.
      const deadline = Date.now() + 60_000;
      while (entry.child === old) {
        if (Date.now() > deadline) throw new Error(`${name} was not restarted within 60 s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await waitReady(name);
      return { oldPid, newPid: entry.view.pid };
    },
    async stopAll() {
      stopping = true;
      const entries = [...supervised.values()].reverse();
      for (const entry of entries) clearTimeout(entry.pendingRestart);
      await Promise.all(entries.map((entry) => stopChild(entry.child)));
    },
  };
}

async function startNode(stateDir: string, spec: ProcessSpec, env: Record<string, string>): Promise<ChildProcess> {
  await mkdir(path.join(stateDir, 'run'), { recursive: true });
  await rm(listenFile(stateDir, spec.name), { force: true });
  env = { ...env, LISTEN_URL_FILE: listenFile(stateDir, spec.name) };
  const logFile = createWriteStream(path.join(stateDir, 'logs', `${spec.name}.log`), { flags: 'a' });
  const child = spawn(process.execPath, [...serviceNodeFlags(spec.service), path.join(repoRoot, spec.entry)], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_COMPILE_CACHE: compileCacheDir(), ...RUNTIME_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(logFile, { end: false });
  child.stderr?.pipe(logFile, { end: false });
  child.once('close', () => logFile.end());
  // Asked to stop if this process exits first; a child leaves the set when it exits, so stacks started one after
  // another in a long-lived process (a shared test worker) leave nothing behind.
  runningChildren.add(child);
  child.once('exit', () => runningChildren.delete(child));
  if (!process.listeners('exit').includes(stopRunningChildren)) process.on('exit', stopRunningChildren);
  return child;
}

/** The processes this process started and that still run: one exit hook stops them all (one per child went past Node's listener limit). */
const runningChildren = new Set<ChildProcess>();
function stopRunningChildren(): void {
  for (const child of runningChildren) child.kill('SIGTERM');
}

/** glibc gives each thread its own malloc arena (up to 8 per CPU); two are plenty for a Node process and save ~7 MiB. */
const RUNTIME_ENV = { MALLOC_ARENA_MAX: '2' };

/**
 * Node's compile cache (bytecode, and the result of stripping TypeScript) shared by the stack's processes: after the
 * first start, each process loads its modules without compiling them again.
 */
const compileCacheDir = () => process.env.NODE_COMPILE_CACHE ?? path.join(repoRoot, '.local', 'compile-cache');

const listenFile = (stateDir: string, name: string) => path.join(stateDir, 'run', `${name}.url`);

async function stopChild(child: ChildProcess, timeoutMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(timer);
}
