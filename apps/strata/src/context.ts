/** The strata CLI: what every command module shares (I/O, the API client, output, watching a run). */
import type { Command } from 'commander';
import YAML from 'yaml';
import { API_PREFIX, createStrataClient, type StrataClient } from '@strata/client';
import { configPath, normalizeServer, readConfig, type StoredConfig } from './config.ts';
import { eventOf, streamEvents, type StrataEvent } from './events.ts';
import { humanDuration, parseDuration } from './format.ts';
import * as render from './render.ts';
import type { Action } from './render.ts';
import type { CliIo, Globals, RunState } from './cli-types.ts';
import { VERSION, UsageError, ExitCode } from './cli-types.ts';
import type { Ref } from './args.ts';
import { linkedController } from './args.ts';

/** What every command module uses: the run's I/O, the API client, output formatting and watching a run. */
export type CommandContext = ReturnType<typeof createContext>;

export function createContext(io: CliIo, state: RunState) {
  const fetchImpl = io.fetch ?? globalThis.fetch;
  const stdinUse = { used: false };
  const out = (s: string): void => {
    io.stdout.write(s);
  };
  const err = (s: string): void => {
    io.stderr.write(s);
  };

  const globals = (cmd: Command): Globals => cmd.optsWithGlobals() as Globals;

  async function loadConfig(): Promise<{ file: string; config: StoredConfig }> {
    const file = configPath(io.env);
    return { file, config: await readConfig(file) };
  }

  function serverFrom(raw: string | undefined, config: StoredConfig): string {
    const [chosen, source] = raw !== undefined ? [raw, '--server'] : io.env.STRATA_SERVER !== undefined ? [io.env.STRATA_SERVER, 'STRATA_SERVER'] : [config.server, `the server in ${configPath(io.env)}`];
    if (!chosen) throw new UsageError('no server: pass --server URL, set STRATA_SERVER, or run `strata login --server URL`');
    let server: string;
    try {
      server = normalizeServer(chosen);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    if (!server.endsWith(API_PREFIX)) return server;
    const base = server.slice(0, -API_PREFIX.length);
    err(`hint: ${source} ${chosen} ends in ${API_PREFIX}, which the CLI adds itself; using ${base}\n`);
    return base;
  }

  /** A client of `server` with the run's fetch, signal and user agent. */
  function clientOf(server: string, token: string | undefined): StrataClient {
    return createStrataClient({ server, token, fetch: fetchImpl, userAgent: `strata-cli/${VERSION}`, signal: io.signal });
  }

  async function connect(cmd: Command): Promise<StrataClient> {
    const { config } = await loadConfig();
    const server = serverFrom(globals(cmd).server, config);
    // A stored token is only sent to the server it was obtained for.
    let stored: string | undefined;
    if (config.token && config.server) {
      try {
        if (normalizeServer(config.server) === server) stored = config.token;
      } catch {
        stored = undefined;
      }
    }
    const token = io.env.STRATA_TOKEN || stored;
    state.server = server;
    state.hasToken = Boolean(token);
    return clientOf(server, token);
  }

  /** Prints `data` as JSON or YAML when asked, else its text rendering. */
  function emit<T>(cmd: Command, data: T, text: (d: T) => string): void {
    const { output } = globals(cmd);
    if (output === 'json') out(JSON.stringify(data ?? null, null, 2) + '\n');
    else if (output === 'yaml') out(YAML.stringify(data ?? null));
    else out(text(data));
  }

  function emitAction(cmd: Command, a: Action): void {
    emit(cmd, a, (x) => render.action(x, state.server));
  }

  interface WatchResult {
    phase: 'succeeded' | 'failed' | 'timeout';
    code: number;
    ref: string;
    object: Ref;
  }

  /**
   * Opens the event stream, then starts the run (so no event is missed), then prints the events of
   * `kind` about the started object until its phase is Succeeded or Failed, or `timeout` passes.
   * After a reconnect (the stream replays nothing) `status` re-reads the object's phase.
   */
  async function watch(
    cmd: Command,
    c: StrataClient,
    kind: 'backup' | 'restore',
    target: Ref,
    start: () => Promise<Action>,
    timeout: string,
    status: (o: Ref) => Promise<StrataEvent | undefined>,
  ): Promise<WatchResult> {
    const json = globals(cmd).output !== 'text';
    const timeoutMs = parseDuration(timeout) ?? 30 * 60_000;
    const controller = linkedController(io.signal);
    let object: Ref | undefined;
    const pending: StrataEvent[] = [];
    let last: StrataEvent | undefined;
    let final: 'succeeded' | 'failed' | undefined;

    const handle = (ev: StrataEvent): boolean => {
      if (!object) {
        pending.push(ev);
        return false;
      }
      if (ev.kind !== kind || ev.name !== object.name || (ev.namespace ?? object.namespace) !== object.namespace) return false;
      last = ev;
      out(json ? JSON.stringify(ev) + '\n' : render.eventLine(ev, kind) + '\n');
      const phase = (ev.phase ?? '').toLowerCase();
      if (phase === 'succeeded') final = 'succeeded';
      else if (phase === 'failed') final = 'failed';
      return final !== undefined;
    };

    let opened!: () => void;
    const open = new Promise<void>((resolve) => {
      opened = resolve;
    });
    const resync = async (): Promise<void> => {
      if (!object || final) return;
      try {
        const ev = await status(object);
        if (ev && !final && handle({ ...ev, kind, namespace: object.namespace, name: object.name })) controller.abort();
      } catch {
        // The stream goes on; the next event or reconnect tries again.
      }
    };
    let missed = false;
    const stream = streamEvents(c, (e) => handle(eventOf(e)), controller.signal, (reconnected) => {
      if (!reconnected) opened();
      else if (object) void resync();
      else missed = true;
    });
    stream.catch(() => undefined);
    await Promise.race([open, stream]);
    if (controller.signal.aborted) throw new ExitCode(130);

    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      let action: Action;
      try {
        action = await start();
      } catch (e) {
        controller.abort();
        throw e;
      }
      const o: Ref = { namespace: action.namespace || target.namespace, name: action.name || target.name };
      out(json ? JSON.stringify(action) + '\n' : render.action(action, state.server));
      object = o;
      for (const ev of pending.splice(0)) {
        if (handle(ev)) {
          controller.abort();
          break;
        }
      }
      // The stream reconnected before the run was known: events may have been lost.
      if (missed && !final) await resync();
      if (!final) {
        const outcome = await stream;
        if (outcome === 'aborted' && !timedOut && !final) throw new ExitCode(130);
      }
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
    const ref = `${object.namespace}/${object.name}`;
    if (final === 'succeeded') return { phase: 'succeeded', code: 0, ref, object };
    if (final === 'failed') {
      err(`error: ${kind} ${ref} failed${last?.message ? `: ${last.message}` : ''}\n`);
      return { phase: 'failed', code: 1, ref, object };
    }
    err(`error: timed out after ${humanDuration(timeoutMs / 1000)} waiting for ${kind} ${ref}${last?.phase ? ` (last phase ${last.phase})` : ''}\n`);
    return { phase: 'timeout', code: 1, ref, object };
  }

  return { io, state, fetchImpl, stdinUse, out, err, globals, loadConfig, serverFrom, connect, emit, emitAction, watch };
}
