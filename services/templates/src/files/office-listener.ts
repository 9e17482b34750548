import { execFile, spawn } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { badFile } from './pdf-inspect.ts';

const execFileAsync = promisify(execFile);
/** The UNO client, run by Debian's Python with python3-uno (see the script for its exit codes). */
const UNO_CLIENT = path.join(import.meta.dirname, 'uno-convert.py');
const UNREADABLE = 2;
const UNREACHABLE = 3;
const NO_UNO = 4;

export interface ListenerOptions {
  /** `soffice`, or a program that execs it with the arguments it is given. */
  command: string;
  /** The Python that has python3-uno. */
  python: string;
  /** The folder of this listener's LibreOffice profile (one per worker: two processes on one profile lose files). */
  profile: string;
  /** The name of the pipe the listener accepts UNO connections on. */
  pipe: string;
  /** How long LibreOffice may take to start answering. */
  startTimeoutMs: number;
}

/** One running LibreOffice that converts documents told to it over its pipe, one at a time. */
export interface Listener {
  readonly pid: number | undefined;
  /** False once the process has gone (it died, was killed, or was stopped). */
  readonly running: boolean;
  /**
   * Converts `input` to the PDF `output`. 'unreachable' when the listener did not take the connection (it died
   * before the job): nothing was tried. Past `timeoutMs` the listener is stopped and the job fails.
   */
  convert(input: string, output: string, timeoutMs: number): Promise<'done' | 'unreachable'>;
  /** Kills the listener's process group (for a process that is exiting and cannot wait). */
  kill(): void;
  /** Kills the listener's process group and resolves once it has gone. */
  stop(): Promise<void>;
}

/** Starts LibreOffice as a listener in its own process group and resolves once it answers over its pipe. */
export async function startListener(options: ListenerOptions): Promise<Listener> {
  const args = [
    `-env:UserInstallation=${pathToFileURL(options.profile).href}`,
    '--headless',
    '--invisible',
    '--norestore',
    '--nolockcheck',
    '--nodefault',
    '--nologo',
    `--accept=pipe,name=${options.pipe};urp;StarOffice.ComponentContext`,
  ];
  // Its own group: `soffice` forks `soffice.bin`, and a kill must reach both.
  const child = spawn(options.command, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const gone = new AbortController();
  let startError: Error | undefined;
  const exited = new Promise<void>((resolve) => {
    child.on('error', (error) => {
      startError = new Error(`cannot start ${options.command}: ${error.message} (install libreoffice-writer-nogui)`);
      gone.abort();
      resolve();
    });
    child.on('close', () => {
      gone.abort();
      resolve();
    });
  });
  const kill = () => {
    if (child.pid !== undefined && !gone.signal.aborted) sigkill(-child.pid);
  };
  const stop = async () => {
    if (child.pid !== undefined && !gone.signal.aborted) await killChildren(child.pid, exited);
    kill();
    await exited;
  };
  const listener: Listener = {
    pid: child.pid,
    get running() {
      return !gone.signal.aborted;
    },
    convert: (input, output, timeoutMs) => convertOver(options, listener, input, output, timeoutMs),
    kill,
    stop,
  };
  try {
    await execFileAsync(options.python, [UNO_CLIENT, 'ready', options.pipe], { timeout: options.startTimeoutMs, killSignal: 'SIGKILL', signal: gone.signal });
  } catch (error) {
    await stop();
    throw startError ?? startFailure(error, options, child.exitCode, stderr);
  }
  return listener;
}

async function convertOver(options: ListenerOptions, listener: Listener, input: string, output: string, timeoutMs: number): Promise<'done' | 'unreachable'> {
  try {
    await execFileAsync(options.python, [UNO_CLIENT, 'convert', options.pipe, input, output], { timeout: timeoutMs, killSignal: 'SIGKILL' });
    return 'done';
  } catch (error) {
    const failure = error as ExecFailure;
    if (failure.code === UNREACHABLE) return 'unreachable';
    if (failure.killed) {
      // A hung LibreOffice answers no one after this job either.
      await listener.stop();
      throw badFile(`The conversion to PDF took longer than ${duration(timeoutMs)} and was stopped.`);
    }
    if (failure.code === UNREADABLE) throw badFile('The file could not be converted to PDF: LibreOffice did not read it as a document.');
    if (failure.code === NO_UNO || typeof failure.code === 'string') throw clientFailure(options, failure);
    throw badFile('The file could not be converted to PDF (LibreOffice failed while converting it).');
  }
}

interface ExecFailure extends Error {
  code?: number | string | null;
  killed?: boolean;
  stderr?: string;
}

function startFailure(error: unknown, options: ListenerOptions, exitCode: number | null, stderr: string): Error {
  const failure = error as ExecFailure;
  if (failure.name === 'AbortError') {
    return new Error(`LibreOffice stopped while starting (exit code ${exitCode})${stderr.trim() ? `: ${stderr.trim().split('\n').at(-1)}` : ''}`);
  }
  if (failure.killed) return new Error(`LibreOffice did not start answering within ${duration(options.startTimeoutMs)}; it was stopped.`);
  return clientFailure(options, failure);
}

/** The UNO client itself failed: a broken installation, not a bad file. */
function clientFailure(options: ListenerOptions, failure: ExecFailure): Error {
  const detail = failure.stderr?.trim().split('\n').at(-1) || failure.message;
  const missing = failure.code === NO_UNO || failure.code === 'ENOENT';
  return new Error(`the UNO client (${options.python} uno-convert.py) failed: ${detail}${missing ? ' (install python3-uno)' : ''}`);
}

function duration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}

/**
 * `soffice` waits for its `soffice.bin` and reaps it; killed first, it would leave `soffice.bin` to an init that may
 * never reap it (a zombie per restart). So its children are killed first, and it is given a moment to exit.
 */
async function killChildren(pid: number, exited: Promise<void>): Promise<void> {
  const children = await childrenOf(pid);
  children.forEach(sigkill);
  if (children.length > 0) await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
}

async function childrenOf(pid: number): Promise<number[]> {
  try {
    const tasks = await readdir(`/proc/${pid}/task`);
    const lists = await Promise.all(tasks.map((task) => readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '')));
    return lists.join(' ').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** SIGKILL to a process, or to a process group given as the negative of its leader's pid. */
function sigkill(target: number): void {
  try {
    process.kill(target, 'SIGKILL');
  } catch {
    // already gone
  }
}
