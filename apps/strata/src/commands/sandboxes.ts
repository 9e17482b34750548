/** The strata CLI: `strata sandbox create|list|get|extend|reset|credentials|delete|query|tables|browse`. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { ApiError, errorMessage, expectData, type Schema, type StrataClient } from '@strata/client';
import { humanDuration, parseDuration } from '../format.ts';
import * as render from '../render.ts';
import { ExitCode, UsageError } from '../cli-types.ts';
import { examples } from '../help.ts';
import { buildRestoreRequest, durationArg, intArg, parseRef, readStdin } from '../args.ts';
import type { CommandContext } from '../context.ts';

const SANDBOX_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const DEFAULT_POLL_MS = 1000;
/** Phases after which a sandbox never becomes Ready, with how the error says it. */
const DEAD_PHASES = new Map([['Failed', 'failed'], ['Expired', 'expired'], ['Deleting', 'is being deleted'], ['Deleted', 'was deleted']]);

interface CreateOptions {
  backup?: string;
  at?: string;
  ttl?: string;
  expose?: boolean;
  reason?: string;
  watch?: boolean;
  timeout: string;
}

interface QueryOptions {
  database?: string;
  write?: boolean;
  limit?: number;
}

function sandboxName(s: string): string {
  if (s.length <= 253 && SANDBOX_NAME.test(s)) return s;
  throw new UsageError(`invalid sandbox name "${s}": expected lowercase letters, digits, "-" and "." (see \`strata sandbox list\`)`);
}

function tableName(s: string): string {
  if (s && !s.includes('/')) return s;
  throw new UsageError(`invalid table "${s}": expected [SCHEMA.]TABLE`);
}

const nameParams = (name: string) => ({ params: { path: { name } } });

function readSandbox(c: StrataClient, name: string): Promise<Schema<'SandboxDetail'>> {
  return expectData(c.api.GET('/sandboxes/{name}', nameParams(name)));
}

/** The server's own aligned table of a query's rows (`Accept: text/plain`). */
async function queryText(c: StrataClient, name: string, body: Schema<'QueryRequest'>): Promise<string> {
  const { data, error, response } = await c.api.POST('/sandboxes/{name}/query', { ...nameParams(name), body, parseAs: 'text', headers: { accept: 'text/plain' } });
  if (!response.ok) throw new ApiError(response.status, errorMessage(response, error));
  const text = data ?? '';
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

/** Every second; `STRATA_POLL_MS` makes the tests' fake sandboxes quick to follow. */
function pollInterval(env: NodeJS.ProcessEnv): number {
  const ms = Number(env.STRATA_POLL_MS);
  return Number.isInteger(ms) && ms > 0 ? ms : DEFAULT_POLL_MS;
}

/** Waits for a new sandbox: polls it until it is Ready (printed), dead or the timeout has passed (exit 1 for both). */
function sandboxWaiter(ctx: CommandContext) {
  const { io, out, err, globals } = ctx;
  async function waitReady(cmd: Command, c: StrataClient, name: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let phase: string | undefined;
    for (;;) {
      const detail = await readSandbox(c, name);
      const s = { ...detail.sandbox, name };
      if (s.phase !== phase && globals(cmd).output === 'text') out(render.sandboxPhaseLine(s));
      phase = s.phase;
      if (phase === 'Ready' || DEAD_PHASES.has(phase ?? '')) return settle(cmd, name, detail);
      const left = deadline - Date.now();
      if (left <= 0) giveUp(name, timeoutMs, phase);
      await sleep(Math.min(pollInterval(io.env), left), undefined, { signal: io.signal });
    }
  }

  function giveUp(name: string, timeoutMs: number, phase: string | undefined): never {
    err(`error: timed out after ${humanDuration(timeoutMs / 1000)} waiting for sandbox ${name}${phase ? ` (last phase ${phase})` : ''}\n`);
    throw new ExitCode(1);
  }

  /** Prints the sandbox that is Ready; a dead one's message goes to stderr and the run exits 1. */
  function settle(cmd: Command, name: string, detail: Schema<'SandboxDetail'>): void {
    const s = detail.sandbox ?? {};
    const dead = DEAD_PHASES.get(s.phase ?? '');
    if (globals(cmd).output !== 'text') out(JSON.stringify(detail) + '\n');
    else if (!dead) out(render.sandboxDetail(detail));
    if (!dead) return;
    err(`error: sandbox ${name} ${dead}${s.message ? `: ${s.message}` : ''}\n`);
    throw new ExitCode(1);
  }

  return waitReady;
}

async function listSandboxes(ctx: CommandContext, cmd: Command): Promise<void> {
  const c = await ctx.connect(cmd);
  ctx.emit(cmd, await expectData(c.api.GET('/sandboxes')), (l) => render.sandboxes(l));
}

export function registerSandboxes(program: Command, ctx: CommandContext): void {
  const sandbox = program
    .command('sandbox')
    .description('isolated, expiring databases restored from a backup: create, query, extend, delete')
    .addHelpText('after', examples(
      ['strata sandbox create prod/orders --ttl 4h --watch', 'restore the latest moment into a sandbox; wait until it is Ready'],
      ['strata sandbox list'],
      ['strata sandbox query orders-sbx-1a2b3c "select count(*) from orders"'],
    ));

  registerLifecycle(sandbox, ctx);
  registerData(sandbox, ctx);

  program
    .command('sandboxes')
    .description('list sandboxes (the same as `strata sandbox list`)')
    .addHelpText('after', examples(['strata sandboxes']))
    .action((_opts: unknown, cmd: Command) => listSandboxes(ctx, cmd));
}

/** create, list, get, extend, reset, credentials, delete. */
function registerLifecycle(sandbox: Command, ctx: CommandContext): void {
  const { out, state, globals, connect, emit, emitAction } = ctx;
  const waitReady = sandboxWaiter(ctx);

  sandbox
    .command('create')
    .description('restore a backup (or a point in time) of a target into a new sandbox')
    .argument('<target>', 'NS/NAME or NAME of the target')
    .option('--backup <id>', 'restore this backup')
    .option('--at <time>', 'point in time (RFC 3339) or "latest" (the default)')
    .option('--ttl <duration>', 'lifetime, e.g. 4h (the policy\'s default when absent, at most its maxTTL)', durationArg)
    .option('--expose', 'expose the sandbox through the configured tunnel')
    .option('--reason <text>', 'reason recorded with the sandbox')
    .option('-w, --watch', 'wait until the sandbox is Ready (exit 0) or fails (exit 1)')
    .option('--timeout <duration>', 'with --watch: give up after this long', durationArg, '30m')
    .addHelpText('after', examples(
      ['strata sandbox create prod/orders', 'the latest restorable moment; the answer names the sandbox'],
      ['strata sandbox create prod/orders --backup 20250301t030000z-ab12 --ttl 8h --reason "incident 42"'],
      ['strata sandbox create prod/orders --at 2025-03-01T02:00:00Z --watch --timeout 1h'],
    ))
    .action(async (ref: string, opts: CreateOptions, cmd: Command) => {
      const request = buildRestoreRequest(parseRef(ref), { ...opts, mode: 'sandbox' });
      const c = await connect(cmd);
      const action = await expectData(c.api.POST('/sandboxes', { body: { ...request, mode: 'sandbox' } }));
      if (!opts.watch) {
        emitAction(cmd, action);
        return;
      }
      out(globals(cmd).output === 'text' ? render.action(action, state.server) : JSON.stringify(action) + '\n');
      if (!action.name) throw new Error('the server did not name the new sandbox; `strata sandbox list` shows it');
      await waitReady(cmd, c, action.name, parseDuration(opts.timeout) ?? 30 * 60_000);
    });

  sandbox
    .command('list')
    .description('list sandboxes: target, engine, phase, expiry')
    .addHelpText('after', examples(['strata sandbox list'], ['strata sandboxes -o json', 'the same, as the API\'s JSON']))
    .action((_opts: unknown, cmd: Command) => listSandboxes(ctx, cmd));

  sandbox
    .command('get')
    .description('show one sandbox: phase, backup, address, size, expiry and extensions')
    .argument('<name>', 'the sandbox\'s name')
    .addHelpText('after', examples(['strata sandbox get orders-sbx-1a2b3c']))
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await readSandbox(c, sandboxName(name)), (d) => render.sandboxDetail(d));
    });

  sandbox
    .command('extend')
    .description('push a sandbox\'s expiry back (bounded by the policy\'s maxTTL)')
    .argument('<name>', 'the sandbox\'s name')
    .requiredOption('--by <duration>', 'how much longer, e.g. 2h', durationArg)
    .option('--reason <text>', 'reason recorded with the extension')
    .addHelpText('after', examples(['strata sandbox extend orders-sbx-1a2b3c --by 2h --reason "still investigating"']))
    .action(async (name: string, opts: { by: string; reason?: string }, cmd: Command) => {
      const body: Schema<'ExtendRequest'> = { by: opts.by };
      if (opts.reason) body.reason = opts.reason;
      const c = await connect(cmd);
      emitAction(cmd, await expectData(c.api.POST('/sandboxes/{name}/extend', { ...nameParams(sandboxName(name)), body })));
    });

  sandbox
    .command('reset')
    .description('recreate a sandbox empty and restore its backup into it again (what was written since is gone)')
    .argument('<name>', 'the sandbox\'s name')
    .option('--reason <text>', 'reason recorded with the reset')
    .option('-w, --watch', 'wait until the sandbox is Ready again (exit 0) or fails (exit 1)')
    .option('--timeout <duration>', 'with --watch: give up after this long', durationArg, '30m')
    .addHelpText('after', examples(['strata sandbox reset orders-sbx-1a2b3c --watch', 'back to the restored state; same name, credentials and expiry']))
    .action(async (name: string, opts: { reason?: string; watch?: boolean; timeout: string }, cmd: Command) => {
      const c = await connect(cmd);
      const action = await expectData(c.api.POST('/sandboxes/{name}/reset', { ...nameParams(sandboxName(name)), body: opts.reason ? { reason: opts.reason } : {} }));
      if (!opts.watch) {
        emitAction(cmd, action);
        return;
      }
      out(globals(cmd).output === 'text' ? render.action(action, state.server) : JSON.stringify(action) + '\n');
      await waitReady(cmd, c, sandboxName(name), parseDuration(opts.timeout) ?? 30 * 60_000);
    });

  sandbox
    .command('credentials')
    .description('print the user name, password and address of the sandbox database (audited)')
    .argument('<name>', 'the sandbox\'s name')
    .addHelpText('after', examples(
      ['strata sandbox credentials orders-sbx-1a2b3c', 'ends with a connection URL and a client command line'],
      ['strata sandbox credentials orders-sbx-1a2b3c -o json'],
    ))
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/sandboxes/{name}/credentials', nameParams(sandboxName(name)))), render.sandboxCredentials);
    });

  sandbox
    .command('delete')
    .description('delete a sandbox and its database now')
    .argument('<name>', 'the sandbox\'s name')
    .addHelpText('after', examples(['strata sandbox delete orders-sbx-1a2b3c']))
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emitAction(cmd, await expectData(c.api.DELETE('/sandboxes/{name}', nameParams(sandboxName(name)))));
    });
}

/** query, tables, browse: what is inside a sandbox. */
function registerData(sandbox: Command, ctx: CommandContext): void {
  const { io, stdinUse, out, globals, connect, emit } = ctx;

  sandbox
    .command('query')
    .description('run one SQL statement in a sandbox (in a read-only transaction unless --write)')
    .argument('<name>', 'the sandbox\'s name')
    .argument('<sql>', 'the statement; "-" reads it from stdin')
    .option('--database <db>', 'database inside the sandbox (default its own)')
    .option('--write', 'run outside a read-only transaction')
    .option('--limit <n>', 'at most this many rows (1-1000, server default 100)', intArg(1, 1000))
    .addHelpText('after', examples(
      ['strata sandbox query orders-sbx-1a2b3c "select id, status from orders order by id desc" --limit 20'],
      ['strata sandbox query orders-sbx-1a2b3c - < check.sql', 'the statement from a file'],
      ['strata sandbox query orders-sbx-1a2b3c "delete from orders where id = 7" --write'],
      ['strata sandbox query orders-sbx-1a2b3c "select 1" -o json', 'columns, rows, masked columns, run time'],
    ))
    .action(async (name: string, sqlArg: string, opts: QueryOptions, cmd: Command) => {
      const path = sandboxName(name);
      const sql = sqlArg === '-' ? await readStdin(io, stdinUse) : sqlArg;
      if (!sql.trim()) throw new UsageError('the SQL statement is empty');
      const body: Schema<'QueryRequest'> = { sql };
      if (opts.database) body.database = opts.database;
      if (opts.write) body.write = true;
      if (opts.limit !== undefined) body.limit = opts.limit;
      const c = await connect(cmd);
      if (globals(cmd).output === 'text') out(await queryText(c, path, body));
      // JSON or YAML: the text rendering is never asked for.
      else emit(cmd, await expectData(c.api.POST('/sandboxes/{name}/query', { ...nameParams(path), body })), () => '');
    });

  sandbox
    .command('tables')
    .description('list the tables of a sandbox database: rows (estimate), size, columns')
    .argument('<name>', 'the sandbox\'s name')
    .option('--database <db>', 'database inside the sandbox (default its own)')
    .addHelpText('after', examples(['strata sandbox tables orders-sbx-1a2b3c'], ['strata sandbox tables orders-sbx-1a2b3c --database billing']))
    .action(async (name: string, opts: { database?: string }, cmd: Command) => {
      const params = { path: { name: sandboxName(name) }, query: { database: opts.database } };
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/sandboxes/{name}/tables', { params })), render.sandboxTables);
    });

  sandbox
    .command('browse')
    .description('show the first 50 rows of a table, with the target\'s mask rules applied')
    .argument('<name>', 'the sandbox\'s name')
    .argument('<table>', '[SCHEMA.]TABLE')
    .option('--database <db>', 'database inside the sandbox (default its own)')
    .addHelpText('after', examples(['strata sandbox browse orders-sbx-1a2b3c public.orders'], ['strata sandbox browse orders-sbx-1a2b3c customers --database billing -o json']))
    .action(async (name: string, table: string, opts: { database?: string }, cmd: Command) => {
      const params = { path: { name: sandboxName(name), table: tableName(table) }, query: { database: opts.database } };
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/sandboxes/{name}/tables/{table}', { params })), render.queryResult);
    });
}
