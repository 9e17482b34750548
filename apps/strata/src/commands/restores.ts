/** The strata CLI: `strata restore`, `restores` and `restore-status`. */
import type { Command} from 'commander';
import { Option } from 'commander';
import type { Query } from '../client.ts';
import * as render from '../render.ts';
import type { Action } from '../render.ts';
import { MODES, ExitCode } from '../cli-types.ts';
import type { RestoreOptions} from '../args.ts';
import { parseRef, refPath, intArg, durationArg, buildRestoreRequest, eventOf } from '../args.ts';
import type { CommandContext } from '../context.ts';

export function registerRestores(program: Command, ctx: CommandContext): void {
  const { out, globals, connect, emit, emitAction, watch } = ctx;
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

}
