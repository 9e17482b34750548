/**
 * Running the engines' own tools: a dump is one or more tool runs whose stdout is concatenated into
 * one stream; a restore peeks at the head of the incoming dump, prepares the destination, then
 * pipes the dump into the tool's stdin. Both keep the tool's own stderr for their errors.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { Transform, Writable } from 'node:stream';
import type { DumpProcess, RestoreProcess } from './types.ts';
import { StderrTail, ToolError, toolError, WARNING } from './tool-error.ts';

/** The environment of a tool: ours without any PG*, MYSQL* or MARIADB* variable, English messages, plus `set`. */
export function toolEnv(set: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(PG|MYSQL|MARIADB|LC_)/.test(key) || key === 'LANGUAGE') continue;
    env[key] = value;
  }
  return { ...env, LC_ALL: 'C', ...set };
}

/** An executable named `name` in the first of `dirs` that has one. */
export function findExecutable(name: string, dirs: string[]): string | undefined {
  for (const dir of dirs) {
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

export function pathDirs(): string[] {
  return (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
}

/** Runs `command --version` and returns its first line. */
export async function toolVersion(command: string): Promise<string> {
  return await new Promise<string>((resolve) => {
    const child = spawn(command, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'], env: toolEnv({}) });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('error', () => resolve('unavailable'));
    child.once('close', () => resolve(out.split('\n')[0]?.trim() || 'unknown'));
  });
}

function stopChild(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }, 5000);
  timer.unref();
  child.once('close', () => clearTimeout(timer));
}

export interface ToolStep {
  /** Name in messages (`pg_dump`, `mariadb-dump`). */
  tool: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Sees what the tool writes to stderr (e.g. positions it reports there). */
  onStderr?: (chunk: Buffer) => void;
  /**
   * A program that reads the tool's stdout through a pipe of their own (the bytes never pass through this process)
   * and whose stdout becomes the dump's: `zstd` compressing a physical backup.
   */
  filter?: { tool: string; command: string; args: string[]; onStderr?: (chunk: Buffer) => void; progressLine?: RegExp };
}

export interface DumpPlan {
  steps: ToolStep[];
  /** Written before the first tool's output. */
  header?: Buffer;
  /** Sees every chunk of the tools' output. */
  tap?: (chunk: Buffer) => void;
  /** What planning found that the dump's record should say (added to the process's warnings). */
  warnings?: string[];
}

/**
 * Runs the plan's tools one after the other into one stream. The stream ends only after the last tool
 * exited 0; a failing tool destroys it with its error, so a truncated dump never looks complete.
 * If the consumer destroys the stream, the running tool is stopped.
 */
export function runDump(tool: string, plan: () => Promise<DumpPlan>): DumpProcess {
  const stdout = new PassThrough({ highWaterMark: 1024 * 1024 });
  // Consumers see errors through their pipeline and through `done`; never crash on an unwatched stream.
  stdout.on('error', () => {});
  const warnings: string[] = [];
  const commands: string[][] = [];
  let finished = false;
  let stopped = false;
  let current: ChildProcess[] = [];

  const kill = (): void => {
    if (finished || stopped) return;
    stopped = true;
    current.forEach(stopChild);
  };
  stdout.once('close', () => {
    if (!finished) kill();
  });

  /** One program of a step, settled with its ToolError when it could not start or did not exit 0. */
  const watch = (child: ChildProcess, tool: string, command: string, onStderr: ((chunk: Buffer) => void) | undefined, collectWarnings: boolean, progressLine?: RegExp): Promise<ToolError | undefined> =>
    new Promise((resolve) => {
      const tail = new StderrTail(64 * 1024, progressLine);
      child.stderr?.on('data', (chunk: Buffer) => {
        tail.push(chunk);
        onStderr?.(chunk);
      });
      child.once('error', (error) => resolve(new ToolError(tool, `${tool}: could not start ${command}: ${error.message}`, null, null, '')));
      child.once('close', (code, signal) => {
        if (collectWarnings) warnings.push(...tail.lines().filter((l) => WARNING.test(l)));
        resolve(code === 0 && !stopped ? undefined : toolError(tool, code, signal, tail, stopped));
      });
    });

  /** Starts a step's filter and waits until it runs; throws the reason it could not start. */
  const startFilter = async (filter: NonNullable<ToolStep['filter']>, env: NodeJS.ProcessEnv): Promise<{ process: ChildProcess; done: Promise<ToolError | undefined> }> => {
    commands.push([filter.command, ...filter.args]);
    const child = spawn(filter.command, filter.args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const done = watch(child, filter.tool, filter.command, filter.onStderr, false, filter.progressLine);
    current = [child];
    const started = await new Promise<boolean>((resolve) => {
      child.once('spawn', () => resolve(true));
      child.once('error', () => resolve(false));
    });
    if (!started) throw (await done) ?? new ToolError(filter.tool, `${filter.tool} did not start`, null, null, '');
    return { process: child, done };
  };

  const runStep = async (step: ToolStep, tap: ((chunk: Buffer) => void) | undefined): Promise<void> => {
    commands.push([step.command, ...step.args]);
    const filter = step.filter ? await startFilter(step.filter, step.env) : undefined;
    let child: ChildProcess;
    try {
      child = spawn(step.command, step.args, { env: step.env, stdio: ['ignore', filter?.process.stdin ?? 'pipe', 'pipe'] });
    } catch (error) {
      if (filter) stopChild(filter.process);
      await filter?.done;
      throw new ToolError(step.tool, `${step.tool}: could not start ${step.command}: ${(error as Error).message}`, null, null, '');
    }
    // The tool holds the pipe's write end now; ours, left open, would keep the filter waiting for more.
    filter?.process.stdin?.destroy();
    const toolDone = watch(child, step.tool, step.command, step.onStderr, true);
    current = filter ? [child, filter.process] : [child];
    const output = (filter?.process ?? child).stdout!;
    if (tap) output.on('data', tap);
    output.pipe(stdout, { end: false });
    // Either of the two failing stops the other (a tool blocked on a lock would not notice a dead filter until its next
    // write). A filter that failed by itself says why (the tool then only saw a broken pipe); one we stopped because
    // the tool failed, or a stopped dump, leaves it to the tool.
    let filterStoppedByUs = false;
    if (filter) {
      const running = (p: ChildProcess) => p.exitCode === null && p.signalCode === null;
      child.once('exit', (code) => {
        if (code === 0 || !running(filter.process)) return;
        filterStoppedByUs = true;
        stopChild(filter.process);
      });
      filter.process.once('exit', (code) => code !== 0 && running(child) && stopChild(child));
    }
    const [toolFailure, filterFailure] = await Promise.all([toolDone, filter?.done]);
    current = [];
    output.unpipe(stdout);
    const filterFailedAlone = filterFailure !== undefined && !(filterStoppedByUs && filterFailure.signal !== null);
    const failure = !stopped && filterFailedAlone ? filterFailure : (toolFailure ?? filterFailure);
    if (failure) throw failure;
  };

  const done = (async () => {
    const p = await plan();
    warnings.push(...(p.warnings ?? []));
    if (stopped) throw new ToolError(tool, `${tool} was stopped before it started`, null, null, '');
    if (p.header) stdout.write(p.header);
    for (const step of p.steps) {
      if (stopped) throw new ToolError(step.tool, `${step.tool} was stopped before it started`, null, null, '');
      await runStep(step, p.tap);
    }
  })();
  done.then(
    () => {
      finished = true;
      stdout.end();
    },
    (error: unknown) => {
      finished = true;
      stdout.destroy(error instanceof Error ? error : new Error(String(error)));
    },
  );
  done.catch(() => {});
  return { stdout, done, warnings, commands, kill };
}

export interface RestoreStart {
  step: ToolStep;
  /** Sits between the dump and the tool's stdin (e.g. a rewriting filter). */
  filter?: Transform;
  /** Undoes what start did (drops the database it created); called when the restore fails. */
  cleanup(): Promise<void>;
  /** Runs after the tool succeeded (e.g. ANALYZE); a failure here is a warning, not a failed restore. */
  finish?(): Promise<void>;
}

export interface RestorePlan {
  tool: string;
  /** Read at most this much of the dump before calling start. */
  headBytes: number;
  /** Stop reading the head early once this says it has what it needs. */
  headComplete?: (head: Buffer) => boolean;
  /** Checks the head, prepares the destination (creates the database) and says what to run; may add warnings. */
  start(head: Buffer, warnings: string[]): Promise<RestoreStart>;
}

/** Reads up to `max` bytes (or until `complete`) of the stream, leaving the rest in it, paused. */
function readHead(input: PassThrough, max: number, complete: ((head: Buffer) => boolean) | undefined): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: Error): void => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('close', onClose);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= max || complete?.(Buffer.concat(chunks))) {
        input.pause();
        finish();
      }
    };
    const onEnd = (): void => finish();
    const onClose = (): void => finish(new Error('the dump stream was closed before its end'));
    input.on('data', onData);
    input.once('end', onEnd);
    input.once('close', onClose);
  });
}

/**
 * Starts a restore: `stdin` accepts the dump at once (with back-pressure); the plan's start runs once
 * the head of the dump is known, then the rest flows into the tool. Fails (and cleans up) when the
 * tool fails, when it is killed, or when the dump stream is closed before its end.
 */
export function runRestore(plan: RestorePlan): RestoreProcess {
  const input = new PassThrough({ highWaterMark: 1024 * 1024 });
  input.on('error', () => {});
  const warnings: string[] = [];
  let stopped = false;
  let current: ChildProcess | undefined;
  let ended = false;
  let closedEarly = false;
  input.once('end', () => (ended = true));
  input.once('close', () => {
    if (!ended) closedEarly = true;
  });

  const kill = (): void => {
    if (stopped) return;
    stopped = true;
    if (current) stopChild(current);
    else input.destroy();
  };

  const pump = (started: RestoreStart, head: Buffer): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const { step } = started;
      const tail = new StderrTail();
      const child = spawn(step.command, step.args, { env: step.env, stdio: ['pipe', 'pipe', 'pipe'] });
      current = child;
      // EPIPE when the tool exits early: its exit status and stderr say why.
      child.stdin.on('error', () => {});
      child.stdout.on('data', (chunk: Buffer) => tail.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => tail.push(chunk));
      const sink: Writable = started.filter ?? child.stdin;
      if (started.filter) {
        started.filter.on('error', () => {});
        started.filter.pipe(child.stdin);
      }
      let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      // 'close' also follows a failed spawn.
      const closed = new Promise<void>((resolveClosed) => child.once('close', () => resolveClosed()));
      let settled = false;
      const settle = (error?: Error): void => {
        if (settled) return;
        settled = true;
        input.off('end', check);
        input.off('close', check);
        if (error) {
          input.unpipe(sink);
          input.destroy(error);
          stopChild(child);
          // Only once the tool is gone may its half-restored database be dropped.
          void closed.then(() => reject(error));
        } else resolve();
      };
      const check = (): void => {
        if (closedEarly && !ended) {
          stopped = true;
          settle(new Error(`${step.tool}: restore aborted: the dump stream was closed before its end`));
          return;
        }
        if (!exit) return;
        if (exit.code !== 0 || stopped) {
          settle(toolError(step.tool, exit.code, exit.signal, tail, stopped));
          return;
        }
        warnings.push(...tail.lines().filter((l) => WARNING.test(l)));
        if (ended) {
          settle();
          return;
        }
        // The tool is done before the end of the stream: take the rest without feeding it anything.
        input.unpipe(sink);
        input.resume();
      };
      child.once('error', (error) => {
        settle(new ToolError(step.tool, `${step.tool}: could not start ${step.command}: ${error.message}`, null, null, ''));
      });
      child.once('close', (code, signal) => {
        current = undefined;
        exit = { code, signal };
        check();
      });
      input.on('end', check);
      input.on('close', check);
      sink.write(head);
      if (ended) sink.end();
      else input.pipe(sink);
      check(); // the dump may have been closed while the destination was being prepared
    });

  const done = (async () => {
    let head: Buffer;
    try {
      head = await readHead(input, plan.headBytes, plan.headComplete);
    } catch (error) {
      if (stopped) throw new ToolError(plan.tool, `${plan.tool} was stopped before it started`, null, null, '');
      throw new Error(`${plan.tool}: restore aborted: ${(error as Error).message}`, { cause: error });
    }
    if (stopped) throw new ToolError(plan.tool, `${plan.tool} was stopped before it started`, null, null, '');
    const started = await plan.start(head, warnings);
    try {
      if (stopped) throw new ToolError(plan.tool, `${plan.tool} was stopped before it started`, null, null, '');
      await pump(started, head);
    } catch (error) {
      await started.cleanup().catch((cleanupError: unknown) => {
        warnings.push(`cleanup after the failed restore failed: ${(cleanupError as Error).message}`);
      });
      throw error;
    }
    if (started.finish) {
      await started.finish().catch((error: unknown) => {
        warnings.push(`after the restore: ${(error as Error).message}`);
      });
    }
  })();
  done.catch((error: unknown) => {
    // Whoever still writes the dump learns that nobody reads it any more.
    if (!input.destroyed) input.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  return { stdin: input, done, warnings, kill };
}
