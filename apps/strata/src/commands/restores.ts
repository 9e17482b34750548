/** The strata CLI: `strata restore`, `restores` and `restore-status`. */
import type { Command} from 'commander';
import { Option } from 'commander';
import { expectData, type Schema, type StrataClient } from '@strata/client';
import type { StrataEvent } from '../events.ts';
import * as render from '../render.ts';
import type { Action } from '../render.ts';
import { MODES, ExitCode } from '../cli-types.ts';
import { examples } from '../help.ts';
import type { Ref, RestoreOptions } from '../args.ts';
import { parseRef, refParams, intArg, durationArg, buildRestoreRequest } from '../args.ts';
import type { CommandContext } from '../context.ts';

function readRestore(c: StrataClient, r: Ref): Promise<Schema<'RestoreDetail'>> {
  return expectData(c.api.GET('/restores/{ns}/{name}', { params: { path: refParams(r) } }));
}

/** A restore's state as the event the stream would have sent (read after a reconnect). */
function restoreEvent(r: Schema<'Restore'>): StrataEvent {
  return { kind: 'restore', namespace: r.namespace, name: r.name, phase: r.phase, message: r.message, stage: r.progress?.stage, bytes: r.progress?.bytes };
}

export function registerRestores(program: Command, ctx: CommandContext): void {
  const { out, err, state, globals, connect, emit, emitAction, watch } = ctx;

  /** What a finished download or sandbox restore gives the user: the link and its expiry, or the sandbox. */
  async function showOutcome(c: StrataClient, object: Ref, mode: 'download' | 'sandbox', json: boolean): Promise<void> {
    const detail = await readRestore(c, object);
    const restore = detail.restore ?? {};
    const ref = `${object.namespace}/${object.name}`;
    if (json) out(JSON.stringify(detail) + '\n');
    else if (restore.phase === 'Failed') err(`error: restore ${ref} failed${restore.message ? `: ${restore.message}` : ''}\n`);
    else if (mode === 'sandbox') out(restore.sandbox ? `sandbox:      ${restore.sandbox}\n` : '');
    else if (restore.phase === 'Succeeded') out(`download URL: ${restore.downloadURL || '-'}\nexpires:      ${restore.downloadExpires ?? '-'}\n`);
    else out(`restore ${ref} is ${restore.phase || 'not ready'}; \`strata restore-status ${ref}\` shows the link once it is ready\n`);
    if (restore.phase === 'Failed') throw new ExitCode(1);
  }

  program
    .command('plan')
    .description('what a restore of a target to a moment would use, and whether that moment is restorable')
    .argument('<target>', 'NS/NAME or NAME')
    .option('--at <time>', 'point in time (RFC 3339) or "latest" (the default)')
    .addHelpText('after', examples(
      ['strata plan prod/orders --at 2025-03-01T02:00:00Z', 'the base backup, the WAL segments and the bytes; exit 1 when the moment is not restorable'],
      ['strata plan prod/orders', 'the end of the newest change-capture window'],
    ))
    .action(async (ref: string, opts: { at?: string }, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      const plan = await expectData(c.api.GET('/targets/{ns}/{name}/plan', { params: { path: refParams(r), query: opts.at ? { at: opts.at } : {} } }));
      emit(cmd, plan, render.plan);
      if (plan.restorable === false) throw new ExitCode(1);
    });

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
    .option('--checks <list>', 'run these checks on what was restored (comma-separated: inventory-matches, schema-matches, row-estimates-within-10pct, target-checks, or names of the target\'s checks)')
    .option('--skip-checks', 'in-place: do not run the checks (they run by default)')
    .option('-w, --watch', 'follow the restore until it succeeds or fails')
    .option('--timeout <duration>', 'with --watch: give up after this long', durationArg, '2h')
    .addHelpText('after', examples(
      ['strata restore prod/orders --mode download', 'prints a link to the encrypted dump and its expiry'],
      ['strata restore prod/orders --mode new --host db2 --port 5432 --database orders_copy --credentials-secret db2-admin --watch'],
      ['strata restore prod/orders --mode new --at 2025-03-01T02:00:00Z --host db2 --database orders_copy --credentials-secret db2-admin'],
      ['strata restore prod/orders --mode in-place --backup ID --confirm orders --credentials-secret orders-admin', 'a safety backup first, then the databases are replaced'],
      ['strata restore prod/orders --mode in-place --confirm orders --tables public.invoices', 'only that table, with its indexes'],
      ['strata restore prod/orders --mode new --host db2 --database orders_copy --credentials-secret db2-admin --checks inventory-matches,schema-matches'],
    ))
    .action(async (ref: string, opts: RestoreOptions, cmd: Command) => {
      const r = parseRef(ref);
      const request = buildRestoreRequest(r, opts);
      const c = await connect(cmd);
      const start = (): Promise<Action> => expectData(c.api.POST('/restores', { body: request }));
      const json = globals(cmd).output !== 'text';
      if (!opts.watch) {
        const action = await start();
        if (opts.mode !== 'download') {
          emitAction(cmd, action);
          return;
        }
        // A download is ready at once: its link is what the user asked for.
        out(json ? JSON.stringify(action) + '\n' : render.action(action, state.server));
        const object = { namespace: action.namespace || r.namespace, name: action.name || r.name };
        await showOutcome(c, object, 'download', json);
        return;
      }
      const result = await watch(cmd, c, 'restore', r, start, opts.timeout, async (o) => {
        const { restore } = await readRestore(c, o);
        return restore ? restoreEvent(restore) : undefined;
      });
      if (result.phase !== 'succeeded') throw new ExitCode(result.code);
      if (!json) out(`restore ${result.ref} succeeded\n`);
      if (opts.mode === 'download' || opts.mode === 'sandbox') await showOutcome(c, result.object, opts.mode, json);
    });

  program
    .command('restores')
    .description('list restores, newest first')
    .option('--target <target>', 'only restores of this target (NS/NAME or NAME)')
    .option('--limit <n>', 'at most this many', intArg(1, 1000))
    .addHelpText('after', examples(['strata restores'], ['strata restores --target prod/orders --limit 5']))
    .action(async (opts: { target?: string; limit?: number }, cmd: Command) => {
      const target = opts.target ? parseRef(opts.target, '--target') : undefined;
      const c = await connect(cmd);
      const query = { target: target ? `${target.namespace}/${target.name}` : undefined, limit: opts.limit };
      emit(cmd, await expectData(c.api.GET('/restores', { params: { query } })), render.restores);
    });

  program
    .command('restore-status')
    .description('show one restore: phase, plan, progress, checks, download link')
    .argument('<restore>', 'NS/NAME or NAME of the Restore')
    .addHelpText('after', examples(['strata restore-status prod/orders-restore-20250301t040000z-ab12', 'a download restore: its link and expiry']))
    .action(async (ref: string, _opts: unknown, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      emit(cmd, await readRestore(c, r), render.restoreDetail);
    });

}
