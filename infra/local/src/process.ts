import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** A server process we started; stop() is bounded and escalates to SIGKILL. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  readonly exited: Promise<number | null>;
  hasExited(): boolean;
  /** Last bytes of the log file, for error messages. */
  logTail(bytes?: number): string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  env: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** Signal that asks for a clean, quick shutdown (postgres: SIGINT = fast shutdown). */
  stopSignal: NodeJS.Signals;
  /** How long to wait after stopSignal before escalating. */
  stopTimeoutMs: number;
}

const live = new Set<{ pid: number; signal: NodeJS.Signals }>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Synchronous only: ask every child we still own to shut down when this process exits.
  process.on('exit', () => {
    for (const child of live) {
      try {
        process.kill(child.pid, child.signal);
      } catch {
        // already gone
      }
    }
    live.clear();
  });
}

const MAX_LOG_BYTES = 5 * 1024 * 1024;

function openLog(file: string): number {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    if (fs.statSync(file).size > MAX_LOG_BYTES) fs.renameSync(file, `${file}.1`);
  } catch {
    // no log yet
  }
  const fd = fs.openSync(file, 'a');
  fs.writeSync(fd, `\n--- ${new Date().toISOString()} starting ---\n`);
  return fd;
}

export function readTail(file: string, bytes = 4000): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const length = Math.min(size, bytes);
      const buffer = Buffer.alloc(length);
      fs.readSync(fd, buffer, 0, length, size - length);
      return buffer.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

/**
 * Spawn a server with stdout/stderr going straight to a log file (so it never
 * blocks on, or dies from, a pipe to us), and register it for the exit hook.
 */
export async function spawnServer(options: SpawnOptions): Promise<ManagedProcess> {
  installExitHook();
  const fd = openLog(options.logFile);
  let child;
  try {
    child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', fd, fd],
      ...(options.uid !== undefined ? { uid: options.uid } : {}),
      ...(options.gid !== undefined ? { gid: options.gid } : {}),
    });
  } finally {
    fs.closeSync(fd);
  }
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      exitCode = code ?? (signal ? null : 0);
      resolve(exitCode);
    });
    child.once('error', (error) => {
      fs.appendFileSync(options.logFile, `spawn error: ${error.message}\n`);
      exitCode = exitCode ?? -1;
      resolve(exitCode);
    });
  });
  // Wait for the spawn to succeed or fail, so a missing binary is an error here.
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (error) => reject(new Error(`${options.name}: could not start ${options.command}: ${error.message}`)));
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${options.name}: could not start ${options.command}`);
  const entry = { pid, signal: options.stopSignal };
  live.add(entry);
  void exited.then(() => live.delete(entry));

  const hasExited = (): boolean => exitCode !== undefined;
  const waitExit = async (ms: number): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), ms);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    name: options.name,
    pid,
    logFile: options.logFile,
    exited,
    hasExited,
    logTail: (bytes?: number) => readTail(options.logFile, bytes),
    stop: onceStopper(pid, hasExited, waitExit, options.stopSignal, options.stopTimeoutMs),
  };
}

function signalPid(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** Stop once: the polite signal, then SIGKILL if the process outlives the timeout. */
function onceStopper(
  pid: number,
  hasExited: () => boolean,
  waitExit: (ms: number) => Promise<boolean>,
  stopSignal: NodeJS.Signals,
  stopTimeoutMs: number,
): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () =>
    (stopping ??= (async () => {
      if (hasExited()) return;
      signalPid(pid, stopSignal);
      if (await waitExit(stopTimeoutMs)) return;
      signalPid(pid, 'SIGKILL');
      await waitExit(5000);
    })());
}

/**
 * Take over a server left running by an earlier run of ours whose owner died
 * (not our child: exit is observed by polling). stop() and the exit hook treat
 * it like one we spawned.
 */
export function adoptProcess(options: {
  name: string;
  pid: number;
  logFile: string;
  stopSignal: NodeJS.Signals;
  stopTimeoutMs: number;
}): ManagedProcess {
  installExitHook();
  const { pid } = options;
  const entry = { pid, signal: options.stopSignal };
  live.add(entry);
  const hasExited = (): boolean => !pidAlive(pid);
  const waitExit = async (ms: number): Promise<boolean> => {
    const deadline = Date.now() + ms;
    while (!hasExited()) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    live.delete(entry);
    return true;
  };
  let exited: Promise<number | null> | undefined;
  return {
    name: options.name,
    pid,
    logFile: options.logFile,
    get exited() {
      exited ??= waitExit(Number.MAX_SAFE_INTEGER).then(() => null);
      return exited;
    },
    hasExited,
    logTail: (bytes?: number) => readTail(options.logFile, bytes),
    stop: onceStopper(pid, hasExited, waitExit, options.stopSignal, options.stopTimeoutMs),
  };
}

/**
 * Who started the server on a state dir: `<file>` holds the pid of the Node
 * process that owns it. A live owner other than us means the server is shared.
 */
export function ownerAlive(file: string): boolean {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return pidAlive(pid);
  } catch {
    return false;
  }
}

export function claimOwner(file: string): () => void {
  fs.writeFileSync(file, `${process.pid}\n`);
  return () => {
    try {
      if (Number(fs.readFileSync(file, 'utf8').trim()) === process.pid) fs.rmSync(file, { force: true });
    } catch {
      // gone already
    }
  };
}

/** True when a process with this pid exists (and, when given, its command line mentions `needle`). */
export function pidAlive(pid: number, needle?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (needle === undefined) return true;
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    return cmdline.includes(needle);
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

/** Look up a system user in /etc/passwd. */
export function lookupUser(name: string): { uid: number; gid: number; home: string } | undefined {
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const fields = line.split(':');
      if (fields[0] === name && fields.length >= 6) {
        return { uid: Number(fields[2]), gid: Number(fields[3]), home: fields[5] ?? '/' };
      }
    }
  } catch {
    // no passwd file
  }
  return undefined;
}

/** Find an executable by name on a PATH string. */
export function which(name: string, pathValue: string | undefined): string | undefined {
  for (const dir of (pathValue ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
