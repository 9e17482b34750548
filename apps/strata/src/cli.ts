// The `strata` command-line client of the Strata console API (docs/strata-cli.md).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import YAML from 'yaml';
import pkg from '../package.json' with { type: 'json' };
import { ApiClient, ApiError, seg, type Query, type StreamEvent } from './client.ts';
import { configPath, normalizeServer, readConfig, writeConfig, type StoredConfig } from './config.ts';
import { humanDuration, isDuration, isTimestamp, parseDuration } from './format.ts';
import * as render from './render.ts';
import type { Action, StrataEvent } from './render.ts';

export interface CliIo {
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  stdin?: Readable;
  fetch?: typeof fetch;
  /** Aborting it stops whatever runs (Ctrl-C); runCli then returns 130. */
  signal?: AbortSignal;
}

export const VERSION: string = pkg.version;
const ROLES = ['viewer', 'operator', 'restorer', 'restorer-admin'] as const;
const MODES = ['new', 'download', 'sandbox', 'in-place'] as const;
const OUTPUTS = ['text', 'json', 'yaml'] as const;
/** The ResourceKind enum of the API. */
export const KINDS = ['BackupStore', 'BackupPolicy', 'BackupTarget', 'Backup', 'Restore', 'Sandbox'] as const;
type Output = (typeof OUTPUTS)[number];

/** Wrong use of the command line: exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

interface Globals {
  server?: string;
  output: Output;
}

interface RunState {
  server?: string;
  hasToken: boolean;
}

/** Runs one invocation (`argv` without the node and script paths) and returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const state: RunState = { hasToken: false };
  const program = buildProgram(io, state);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof ExitCode) return err.code;
    if (err instanceof CommanderError) {
      // Commander has already printed the help, the version or `error: ...`.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      if (err.code === 'commander.help') return err.exitCode === 0 ? 0 : 2;
      return 2;
    }
    if (io.signal?.aborted) return 130;
    if (err instanceof UsageError) {
      io.stderr.write(`error: ${err.message}\n`);
      return 2;
    }
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`error: ${message}\n`);
    if (err instanceof ApiError && err.status === 401) {
      const server = state.server ? ` --server ${state.server}` : '';
      io.stderr.write(
        state.hasToken
          ? `hint: the token was refused (expired?); run \`strata login${server}\` again\n`
          : `hint: not logged in; run \`strata login${server}\`\n`,
      );
    }
    return 1;
  }
}

/** Ends the run with a code after the command has printed what it had to say. */
class ExitCode extends Error {
  readonly code: number;
  constructor(code: number) {
    super(`exit ${code}`);
    this.code = code;
  }
}

// ---------------------------------------------------------------------------------------------------
// Argument helpers

export interface Ref {
  namespace: string;
  name: string;
}

/** `ns/name`, or a bare `name` meaning namespace `default`. */
export function parseRef(s: string, what = 'NS/NAME'): Ref {
  const parts = s.split('/');
  if (parts.length === 1 && parts[0]) return { namespace: 'default', name: parts[0] };
  if (parts.length === 2 && parts[0] && parts[1]) return { namespace: parts[0], name: parts[1] };
  throw new UsageError(`invalid ${what} "${s}": expected NAMESPACE/NAME or NAME`);
}

/** `backuptarget`, `BackupTargets`, ... -> `BackupTarget`. */
export function parseKind(s: string): string {
  const k = s.toLowerCase();
  const found = KINDS.find((kind) => kind.toLowerCase() === k || `${kind.toLowerCase()}s` === k);
  if (!found) throw new UsageError(`unknown kind "${s}": expected one of ${KINDS.join(', ')}`);
  return found;
}

function refPath(r: Ref): string {
  return `${seg(r.namespace)}/${seg(r.name)}`;
}

function intArg(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    return n;
  };
}

function durationArg(value: string): string {
  if (!isDuration(value)) throw new InvalidArgumentError('expected a duration such as 30m, 4h, 1h30m or 7d.');
  return value;
}

function collect(value: string, previous: string[]): string[] {
  return previous.concat(value);
}

/** `key=value` -> [key, value]; the value may contain `=`. */
export function parsePair(s: string, what = 'key=value'): [string, string] {
  const i = s.indexOf('=');
  if (i <= 0) throw new UsageError(`invalid ${what} "${s}": expected KEY=VALUE`);
  return [s.slice(0, i), s.slice(i + 1)];
}

async function readStdin(io: CliIo, stdinUse: { used: boolean }): Promise<string> {
  if (!io.stdin) throw new UsageError('standard input is not available');
  if (stdinUse.used) throw new UsageError('standard input ("-") can be read only once');
  stdinUse.used = true;
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

async function readInput(file: string, io: CliIo, stdinUse: { used: boolean }): Promise<string> {
  if (file === '-') return readStdin(io, stdinUse);
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
}

// ---------------------------------------------------------------------------------------------------
// Program

function buildProgram(io: CliIo, state: RunState): Command {
  const fetchImpl = io.fetch ?? globalThis.fetch;
  const stdinUse = { used: false };
  const out = (s: string): void => {
    io.stdout.write(s);
  };
  const err = (s: string): void => {
    io.stderr.write(s);
  };

  const program = new Command('strata')
    .description('Command-line client of the Strata backup service console API.')
    .version(VERSION, '-V, --version', 'print the version')
    .addOption(new Option('--server <url>', 'console base URL (default: $STRATA_SERVER, then the config file)'))
    .addOption(new Option('-o, --output <format>', 'output format').choices(OUTPUTS).default('text'))
    .helpCommand(true)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: out,
      writeErr: err,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
      getOutHelpWidth: () => 100,
      getErrHelpWidth: () => 100,
    });

  const globals = (cmd: Command): Globals => cmd.optsWithGlobals() as Globals;

  async function loadConfig(): Promise<{ file: string; config: StoredConfig }> {
    const file = configPath(io.env);
    return { file, config: await readConfig(file) };
  }

  function serverFrom(raw: string | undefined, config: StoredConfig): string {
    const chosen = raw ?? io.env.STRATA_SERVER ?? config.server;
    if (!chosen) throw new UsageError('no server: pass --server URL, set STRATA_SERVER, or run `strata login --server URL`');
    try {
      return normalizeServer(chosen);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }

  async function connect(cmd: Command): Promise<ApiClient> {
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
    return new ApiClient({ server, token, fetch: fetchImpl, userAgent: `strata-cli/${VERSION}`, signal: io.signal });
  }

  /** Prints `data` as JSON or YAML when asked, else its text rendering. */
  function emit(cmd: Command, data: unknown, text: (d: never) => string): void {
    const { output } = globals(cmd);
    if (output === 'json') out(JSON.stringify(data ?? null, null, 2) + '\n');
    else if (output === 'yaml') out(YAML.stringify(data ?? null));
    else out(text(data as never));
  }

  function emitAction(cmd: Command, a: Action): void {
    emit(cmd, a, render.action);
  }

  // ----- login / logout -----------------------------------------------------------------------------

  program
    .command('login')
    .description('sign in: get a token from the local stack\'s dev issuer (--email) or store one from the access proxy (--token)')
    .option('--email <email>', 'e-mail of the principal (dev issuer of the local stack)')
    .addOption(new Option('--role <role>', 'role asked from the dev issuer (default: the issuer\'s, restorer-admin on the local stack)').choices(ROLES))
    .option('--token <jwt>', 'access token from the real access proxy (e.g. `cloudflared access token --app URL`); "-" reads stdin')
    .action(async (opts: { email?: string; role?: string; token?: string }, cmd: Command) => {
      if (opts.email && opts.token) throw new UsageError('pass either --email (dev issuer) or --token, not both');
      if (!opts.email && !opts.token) throw new UsageError('pass --email E (local-stack dev issuer) or --token JWT');
      const { file, config } = await loadConfig();
      const server = serverFrom(globals(cmd).server, config);
      state.server = server;
      let token: string;
      let expiresAt: string | undefined;
      if (opts.token) {
        token = (opts.token === '-' ? await readStdin(io, stdinUse) : opts.token).trim();
        if (!token) throw new UsageError('the token is empty');
      } else {
        const client = new ApiClient({ server, token: undefined, fetch: fetchImpl, userAgent: `strata-cli/${VERSION}`, signal: io.signal });
        let answer: { token?: unknown; expiresAt?: unknown };
        try {
          answer = await client.request('POST', '/api/dev/token', {
            absolutePath: true,
            anonymous: true,
            json: opts.role ? { email: opts.email, role: opts.role } : { email: opts.email },
          });
        } catch (e) {
          if (e instanceof ApiError && e.status === 404) {
            throw new ApiError(404, `${server} has no dev token issuer (only the local stack has one); use --token with a token from the access proxy`);
          }
          throw e;
        }
        if (!answer || typeof answer.token !== 'string' || !answer.token) {
          throw new ApiError(0, 'the dev issuer answered without a token');
        }
        token = answer.token;
        expiresAt = typeof answer.expiresAt === 'string' ? answer.expiresAt : undefined;
      }
      const next: StoredConfig = { server, token };
      if (expiresAt) next.expiresAt = expiresAt;
      await writeConfig(file, next);
      const summary = { server, email: opts.email, role: opts.token ? undefined : opts.role, expiresAt, config: file };
      emit(cmd, summary, () => {
        const who = opts.email ? ` as ${opts.email}${opts.role ? ` (${opts.role})` : ''}` : '';
        const until = expiresAt ? `; token expires ${expiresAt}` : '';
        return `Logged in to ${server}${who}${until}.\nSaved to ${file}\n`;
      });
    });

  program
    .command('logout')
    .description('forget the stored token (the server stays configured)')
    .action(async (_opts: unknown, cmd: Command) => {
      const { file, config } = await loadConfig();
      if (!config.token) {
        emit(cmd, { server: config.server, loggedOut: false }, () => 'Not logged in.\n');
        return;
      }
      const next: StoredConfig = {};
      if (config.server) next.server = config.server;
      await writeConfig(file, next);
      emit(cmd, { server: config.server, loggedOut: true }, () => `Logged out of ${config.server ?? 'the server'}.\n`);
    });

  // ----- whoami / settings --------------------------------------------------------------------------

  program
    .command('whoami')
    .description('show the signed-in principal and its role')
    .action(async (_opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await c.request('GET', '/whoami'), render.whoami);
    });

  program
    .command('settings')
    .description('show stores, policies and the catalog state')
    .action(async (_opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await c.request('GET', '/settings'), render.settings);
    });

  // ----- resources ----------------------------------------------------------------------------------

  program
    .command('apply')
    .description('create or update declarative resources from YAML or JSON files')
    .requiredOption('-f, --filename <file>', 'file to apply ("-" reads stdin); repeatable', collect, [] as string[])
    .action(async (opts: { filename: string[] }, cmd: Command) => {
      if (opts.filename.length === 0) throw new UsageError('pass at least one -f FILE');
      const inputs: Array<{ file: string; body: string; contentType: string }> = [];
      for (const file of opts.filename) {
        const body = await readInput(file, io, stdinUse);
        const label = file === '-' ? 'stdin' : file;
        inputs.push({ file: label, body, contentType: checkDocument(label, body) });
      }
      const c = await connect(cmd);
      const results: unknown[] = [];
      for (const input of inputs) {
        let result: unknown;
        try {
          result = await c.request('POST', '/resources', { body: input.body, contentType: input.contentType });
        } catch (e) {
          if (e instanceof ApiError && inputs.length > 1) throw new ApiError(e.status, `${input.file}: ${e.message}`);
          throw e;
        }
        results.push(result);
        if (globals(cmd).output === 'text') out(render.applyResult(result));
      }
      if (globals(cmd).output !== 'text') emit(cmd, results.length === 1 ? results[0] : results, () => '');
    });

  const get = program.command('get').description('read declarative resources');
  get
    .command('resources')
    .description('list declarative resources')
    .option('--kind <kind>', 'only this kind (BackupTarget, BackupPolicy, BackupStore, Backup, Restore, Sandbox)')
    .action(async (opts: { kind?: string }, cmd: Command) => {
      const kind = opts.kind ? parseKind(opts.kind) : undefined;
      const c = await connect(cmd);
      emit(cmd, await c.request('GET', '/resources', { query: { kind } }), render.resources);
    });
  get
    .command('resource')
    .description('print one resource document (YAML by default)')
    .argument('<kind>', 'resource kind, e.g. BackupTarget')
    .argument('<ref>', 'NS/NAME or NAME')
    .action(async (kind: string, ref: string, _opts: unknown, cmd: Command) => {
      const k = parseKind(kind);
      const r = parseRef(ref);
      const c = await connect(cmd);
      const doc = await c.request('GET', `/resources/${seg(k)}/${refPath(r)}`);
      emit(cmd, doc, (d: unknown) => (typeof d === 'string' ? d : YAML.stringify(d)));
    });

  const del = program.command('delete').description('delete declarative resources');
  del
    .command('resource')
    .description('delete one resource')
    .argument('<kind>', 'resource kind, e.g. BackupTarget')
    .argument('<ref>', 'NS/NAME or NAME')
    .action(async (kind: string, ref: string, _opts: unknown, cmd: Command) => {
      const k = parseKind(kind);
      const r = parseRef(ref);
      const c = await connect(cmd);
      emitAction(cmd, await c.request('DELETE', `/resources/${seg(k)}/${refPath(r)}`));
    });

  // ----- targets ------------------------------------------------------------------------------------

  program
    .command('targets')
    .description('list targets with their last backup, change-capture window and health')
    .option('--env <env>', 'only this environment')
    .option('--org <org>', 'only this organization')
    .option('--project <project>', 'only this project')
    .option('--health <health>', 'only this health (e.g. ok)')
    .option('--q <text>', 'free-text search')
    .action(async (opts: Query, cmd: Command) => {
      const c = await connect(cmd);
      const query: Query = { env: opts.env, org: opts.org, project: opts.project, health: opts.health, q: opts.q };
      emit(cmd, await c.request('GET', '/targets', { query }), render.targets);
    });

  program
    .command('target')
    .description('show one target')
    .argument('<target>', 'NS/NAME or NAME')
    .action(async (ref: string, _opts: unknown, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      emit(cmd, await c.request('GET', `/targets/${refPath(r)}`), render.targetDetail);
    });

  for (const verb of ['suspend', 'resume'] as const) {
    program
      .command(verb)
      .description(verb === 'suspend' ? 'pause scheduled backups and change streams of a target' : 'continue scheduled backups and streams')
      .argument('<target>', 'NS/NAME or NAME')
      .option('--reason <text>', 'reason recorded in the audit log')
      .action(async (ref: string, opts: { reason?: string }, cmd: Command) => {
        const r = parseRef(ref);
        const c = await connect(cmd);
        emitAction(cmd, await c.request('POST', `/targets/${refPath(r)}/${verb}`, { json: reasonBody(opts.reason) }));
      });
  }

  program
    .command('backup-now')
    .description('start a full backup of a target')
    .argument('<target>', 'NS/NAME or NAME')
    .option('--reason <text>', 'reason recorded with the backup')
    .option('-w, --watch', 'follow the backup until it succeeds or fails')
    .option('--timeout <duration>', 'with --watch: give up after this long', durationArg, '30m')
    .action(async (ref: string, opts: { reason?: string; watch?: boolean; timeout: string }, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      const start = (): Promise<Action> => c.request<Action>('POST', `/targets/${refPath(r)}/backup-now`, { json: reasonBody(opts.reason) });
      if (!opts.watch) {
        emitAction(cmd, await start());
        return;
      }
      const result = await watch(cmd, c, 'backup', r, start, opts.timeout, async (o) => {
        const a = await c.request<{ backups?: Array<Record<string, unknown>> }>('GET', '/activity', { query: { limit: 500 } });
        const run = a?.backups?.find((b) => b.namespace === o.namespace && b.name === o.name);
        return run ? eventOf({ event: 'backup', id: undefined, raw: '', data: { ...run, kind: 'backup' } }) : undefined;
      });
      if (result.phase !== 'succeeded') throw new ExitCode(result.code);
      if (globals(cmd).output === 'text') out(`backup ${result.ref} succeeded\n`);
    });

  program
    .command('backups')
    .description('list the backups of a target, newest first')
    .argument('<target>', 'NS/NAME or NAME')
    .option('--limit <n>', 'at most this many (1-1000, server default 100)', intArg(1, 1000))
    .action(async (ref: string, opts: { limit?: number }, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      emit(cmd, await c.request('GET', `/targets/${refPath(r)}/backups`, { query: { limit: opts.limit } }), render.backups);
    });

  // ----- backups ------------------------------------------------------------------------------------

  program
    .command('backup')
    .description('show one backup (manifest summary and tags)')
    .argument('<id>', 'backup id')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await c.request('GET', `/backups/${seg(id)}`), render.backupDetail);
    });

  program
    .command('inventory')
    .description('show what the databases looked like at backup time (no row data)')
    .argument('<id>', 'backup id')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await c.request('GET', `/backups/${seg(id)}/inventory`), render.inventory);
    });

  program
    .command('pin')
    .description('hold a backup against retention')
    .argument('<id>', 'backup id')
    .option('--expires <when>', 'a duration such as 30d, or an RFC 3339 time; omitted means forever')
    .option('--reason <text>', 'why the backup is kept')
    .action(async (id: string, opts: { expires?: string; reason?: string }, cmd: Command) => {
      if (opts.expires !== undefined && !isDuration(opts.expires) && !isTimestamp(opts.expires)) {
        throw new UsageError(`invalid --expires "${opts.expires}": expected a duration such as 30d or an RFC 3339 time`);
      }
      const body: Record<string, string> = {};
      if (opts.expires) body.expires = opts.expires;
      if (opts.reason) body.reason = opts.reason;
      const c = await connect(cmd);
      emitAction(cmd, await c.request('POST', `/backups/${seg(id)}/pin`, { json: body }));
    });

  program
    .command('unpin')
    .description('release a pinned backup to retention')
    .argument('<id>', 'backup id')
    .option('--reason <text>', 'reason recorded in the audit log')
    .action(async (id: string, opts: { reason?: string }, cmd: Command) => {
      const c = await connect(cmd);
      emitAction(cmd, await c.request('POST', `/backups/${seg(id)}/unpin`, { json: reasonBody(opts.reason) }));
    });

  // ----- restores -----------------------------------------------------------------------------------

  program
    .command('restore')
    .description('restore a target: to a new database, a download, a sandbox, or in place')
    .argument('<target>', 'NS/NAME or NAME of the target to restore')
    .addOption(new Option('--mode <mode>', 'where the data goes').choices(MODES).makeOptionMandatory())
    .option('--backup <id>', 'restore this backup')
    .option('--at <time>', 'point in time (RFC 3339) or "latest" (the default)')
    .option('--host <host>', 'new: server host of the new database')
    .option('--port <port>', 'new: server port', intArg(1, 65535))
    .option('--database <name>', 'new: name of the database to create')
    .option('--credentials-secret <name>', 'new, in-place: secret with admin credentials')
    .option('--tables <list>', 'restore only these tables (comma-separated)')
    .option('--ttl <duration>', 'sandbox: lifetime, e.g. 4h', durationArg)
    .option('--expose', 'sandbox: expose through the configured tunnel')
    .option('--confirm <name>', 'in-place: must equal the target name')
    .option('--skip-safety-backup', 'in-place: skip the automatic safety backup (not recommended)')
    .option('--reason <text>', 'reason recorded with the restore')
    .option('-w, --watch', 'follow the restore until it succeeds or fails')
    .option('--timeout <duration>', 'with --watch: give up after this long', durationArg, '2h')
    .action(async (ref: string, opts: RestoreOptions, cmd: Command) => {
      const r = parseRef(ref);
      const request = buildRestoreRequest(r, opts);
      const c = await connect(cmd);
      const start = (): Promise<Action> => c.request<Action>('POST', '/restores', { json: request });
      if (!opts.watch) {
        emitAction(cmd, await start());
        return;
      }
      const result = await watch(cmd, c, 'restore', r, start, opts.timeout, async (o) => {
        const d = await c.request<{ restore?: Record<string, unknown> }>('GET', `/restores/${refPath(o)}`);
        const restore = d?.restore;
        if (!restore) return undefined;
        const progress = (restore.progress ?? {}) as Record<string, unknown>;
        return eventOf({ event: 'restore', id: undefined, raw: '', data: { ...restore, kind: 'restore', stage: progress.stage, bytes: progress.bytes } });
      });
      if (result.phase !== 'succeeded') throw new ExitCode(result.code);
      const json = globals(cmd).output !== 'text';
      if (!json) out(`restore ${result.ref} succeeded\n`);
      if (opts.mode === 'download' || opts.mode === 'sandbox') {
        const detail = await c.request<{ restore?: Record<string, unknown> }>('GET', `/restores/${refPath(result.object)}`);
        const restore = detail?.restore ?? {};
        if (json) {
          out(JSON.stringify(detail) + '\n');
        } else if (opts.mode === 'download') {
          out(`download URL: ${String(restore.downloadURL ?? '-')}\n`);
          out(`expires:      ${String(restore.downloadExpires ?? '-')}\n`);
        } else if (restore.sandbox) {
          out(`sandbox:      ${String(restore.sandbox)}\n`);
        }
      }
    });

  program
    .command('restores')
    .description('list restores, newest first')
    .option('--target <target>', 'only restores of this target (NS/NAME or NAME)')
    .option('--limit <n>', 'at most this many', intArg(1, 1000))
    .action(async (opts: { target?: string; limit?: number }, cmd: Command) => {
      const target = opts.target ? parseRef(opts.target, '--target') : undefined;
      const c = await connect(cmd);
      const query: Query = { target: target ? `${target.namespace}/${target.name}` : undefined, limit: opts.limit };
      emit(cmd, await c.request('GET', '/restores', { query }), render.restores);
    });

  program
    .command('restore-status')
    .description('show one restore: phase, plan, progress, checks, download link')
    .argument('<restore>', 'NS/NAME or NAME of the Restore')
    .action(async (ref: string, _opts: unknown, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      emit(cmd, await c.request('GET', `/restores/${refPath(r)}`), render.restoreDetail);
    });

  // ----- activity, audit, events --------------------------------------------------------------------

  program
    .command('activity')
    .description('recent and running backups and restores')
    .option('--limit <n>', 'at most this many (1-500, server default 50)', intArg(1, 500))
    .action(async (opts: { limit?: number }, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await c.request('GET', '/activity', { query: { limit: opts.limit } }), render.activity);
    });

  program
    .command('audit')
    .description('recent audit events of the answering replica, newest first')
    .option('--action <action>', 'only this action')
    .option('--user <user>', 'only this user')
    .option('--limit <n>', 'at most this many (1-1000, server default 100)', intArg(1, 1000))
    .action(async (opts: { action?: string; user?: string; limit?: number }, cmd: Command) => {
      const c = await connect(cmd);
      const query: Query = { action: opts.action, user: opts.user, limit: opts.limit };
      emit(cmd, await c.request('GET', '/audit', { query }), render.audit);
    });

  program
    .command('events')
    .description('print server events (backup, restore, sandbox, target, catalog) until interrupted')
    .option('--kind <kind>', 'only events of this kind')
    .option('--count <n>', 'stop after this many events', intArg(1, Number.MAX_SAFE_INTEGER))
    .action(async (opts: { kind?: string; count?: number }, cmd: Command) => {
      const c = await connect(cmd);
      const json = globals(cmd).output !== 'text';
      const controller = linkedController(io.signal);
      let seen = 0;
      const outcome = await c.streamEvents((e) => {
        const ev = eventOf(e);
        if (opts.kind && ev.kind !== opts.kind) return false;
        out(json ? JSON.stringify(e.data ?? e.raw) + '\n' : render.eventLine(ev) + '\n');
        seen++;
        return opts.count !== undefined && seen >= opts.count;
      }, controller.signal);
      if (outcome === 'aborted') throw new ExitCode(130);
    });

  // ----- secrets ------------------------------------------------------------------------------------

  const secret = program.command('secret').description('manage secrets referenced by resources (values are never shown)');
  secret
    .command('set')
    .description('create or replace a secret')
    .argument('<secret>', 'NS/NAME or NAME')
    .argument('[pairs...]', 'KEY=VALUE pairs')
    .option('--from-file <key=path>', 'value of KEY read from a file ("-" reads stdin); repeatable', collect, [] as string[])
    .action(async (ref: string, pairs: string[], opts: { fromFile: string[] }, cmd: Command) => {
      const r = parseRef(ref);
      const data: Record<string, string> = {};
      const put = (key: string, value: string): void => {
        if (Object.hasOwn(data, key)) throw new UsageError(`key "${key}" given twice`);
        data[key] = value;
      };
      for (const p of pairs) put(...parsePair(p));
      for (const f of opts.fromFile) {
        const [key, file] = parsePair(f, '--from-file');
        if (!file) throw new UsageError(`invalid --from-file "${f}": expected KEY=PATH`);
        put(key, await readInput(file, io, stdinUse));
      }
      if (Object.keys(data).length === 0) throw new UsageError('pass at least one KEY=VALUE or --from-file KEY=PATH');
      const c = await connect(cmd);
      emitAction(cmd, await c.request('PUT', `/secrets/${refPath(r)}`, { json: { data } }));
    });
  secret
    .command('list')
    .description('list secrets and their keys')
    .action(async (_opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await c.request('GET', '/secrets'), render.secrets);
    });
  secret
    .command('delete')
    .description('delete a secret')
    .argument('<secret>', 'NS/NAME or NAME')
    .action(async (ref: string, _opts: unknown, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      emitAction(cmd, await c.request('DELETE', `/secrets/${refPath(r)}`));
    });

  // ----- watching -----------------------------------------------------------------------------------

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
    c: ApiClient,
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
    const stream = c.streamEvents((e) => handle(eventOf(e)), controller.signal, (reconnected) => {
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
      const o: Ref = { namespace: action?.namespace || target.namespace, name: action?.name || target.name };
      out(json ? JSON.stringify(action) + '\n' : render.action(action));
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

  return program;
}

// ---------------------------------------------------------------------------------------------------

interface RestoreOptions {
  mode: (typeof MODES)[number];
  backup?: string;
  at?: string;
  host?: string;
  port?: number;
  database?: string;
  credentialsSecret?: string;
  tables?: string;
  ttl?: string;
  expose?: boolean;
  confirm?: string;
  skipSafetyBackup?: boolean;
  reason?: string;
  watch?: boolean;
  timeout: string;
}

/** The RestoreRequest of `strata restore`: only the fields given on the command line. */
export function buildRestoreRequest(target: Ref, o: Omit<RestoreOptions, 'timeout'>): Record<string, unknown> {
  if (o.backup && o.at) throw new UsageError('pass either --backup or --at, not both');
  if (o.at && o.at !== 'latest' && !isTimestamp(o.at)) {
    throw new UsageError(`invalid --at "${o.at}": expected an RFC 3339 time or "latest"`);
  }
  if (o.mode === 'in-place') {
    if (!o.confirm) throw new UsageError(`an in-place restore overwrites ${target.name}: pass --confirm ${target.name}`);
    if (o.confirm !== target.name) throw new UsageError(`--confirm must equal the target name "${target.name}"`);
  }
  const req: Record<string, unknown> = { target: `${target.namespace}/${target.name}` };
  if (o.backup) req.backupID = o.backup;
  if (o.at) req.at = o.at;
  req.mode = o.mode;
  if (o.host) req.host = o.host;
  if (o.port !== undefined) req.port = o.port;
  if (o.database) req.database = o.database;
  if (o.credentialsSecret) req.credentialsSecret = o.credentialsSecret;
  if (o.tables !== undefined) {
    const tables = o.tables.split(',').map((t) => t.trim()).filter(Boolean);
    if (!tables.length) throw new UsageError('--tables needs at least one table name');
    req.tables = tables;
  }
  if (o.ttl) req.ttl = o.ttl;
  if (o.expose) req.expose = true;
  if (o.confirm) req.confirm = o.confirm;
  if (o.skipSafetyBackup) req.skipSafetyBackup = true;
  if (o.reason) req.reason = o.reason;
  return req;
}

function reasonBody(reason: string | undefined): Record<string, string> {
  return reason ? { reason } : {};
}

function eventOf(e: StreamEvent): StrataEvent {
  const d = e.data ?? {};
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' && v !== '' && !Number.isNaN(Number(v)) ? Number(v) : undefined);
  return {
    kind: str(d.kind) ?? (e.event !== 'message' ? e.event : undefined),
    namespace: str(d.namespace),
    name: str(d.name),
    phase: str(d.phase),
    stage: str(d.stage),
    message: str(d.message),
    bytes: num(d.bytes),
    version: num(d.version),
  };
}

function linkedController(signal: AbortSignal | undefined): AbortController {
  const c = new AbortController();
  if (signal) {
    if (signal.aborted) c.abort();
    else signal.addEventListener('abort', () => c.abort(), { once: true });
  }
  return c;
}

/** Checks that a file parses (so a typo is reported with its line) and picks its content type. */
function checkDocument(file: string, body: string): string {
  if (!body.trim()) throw new Error(`${file}: the file is empty`);
  const ext = path.extname(file).toLowerCase();
  const looksJson = ext === '.json' || (ext !== '.yaml' && ext !== '.yml' && /^\s*[[{]/.test(body));
  if (looksJson) {
    try {
      JSON.parse(body);
      return 'application/json';
    } catch (e) {
      if (ext === '.json') throw new Error(`${file}: invalid JSON: ${(e as Error).message}`, { cause: e });
    }
  }
  for (const doc of YAML.parseAllDocuments(body)) {
    const first = doc.errors[0];
    if (first) throw new Error(`${file}: invalid YAML: ${first.message.split('\n')[0]}`);
  }
  return 'application/yaml';
}
