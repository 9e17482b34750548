/** The strata CLI: Targets: list, detail, suspend/resume, `backup-now` and a target's backups. */
import type { Command } from 'commander';
import type { Query } from '../client.ts';
import * as render from '../render.ts';
import type { Action } from '../render.ts';
import { ExitCode } from '../cli-types.ts';
import { parseRef, refPath, intArg, durationArg, reasonBody, eventOf } from '../args.ts';
import type { CommandContext } from '../context.ts';

export function registerTargets(program: Command, ctx: CommandContext): void {
  const { out, globals, connect, emit, emitAction, watch } = ctx;
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

}
