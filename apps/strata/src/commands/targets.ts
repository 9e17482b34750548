/** The strata CLI: Targets: list, detail, suspend/resume, `backup-now` and a target's backups. */
import { Option, type Command } from 'commander';
import type { operations } from '@sigil/proto/api/strata';
import { expectData, type Schema, type StrataClient } from '@strata/client';
import type { StrataEvent } from '../events.ts';
import * as render from '../render.ts';
import type { Action } from '../render.ts';
import { ExitCode, HEALTHS } from '../cli-types.ts';
import { examples } from '../help.ts';
import type { Ref } from '../args.ts';
import { parseRef, refParams, intArg, durationArg, reasonBody } from '../args.ts';
import type { CommandContext } from '../context.ts';

type TargetFilters = NonNullable<operations['listTargets']['parameters']['query']>;

/** The backup run `o` as the event the stream would have sent, from the activity list (read after a reconnect). */
async function backupRunEvent(c: StrataClient, o: Ref): Promise<StrataEvent | undefined> {
  const activity = await expectData(c.api.GET('/activity', { params: { query: { limit: 500 } } }));
  const run = activity.backups?.find((b) => b.namespace === o.namespace && b.name === o.name);
  return run ? runEvent(run) : undefined;
}

function runEvent(run: Schema<'BackupRun'>): StrataEvent {
  return { kind: 'backup', namespace: run.namespace, name: run.name, phase: run.phase, message: run.message, bytes: run.bytes };
}

export function registerTargets(program: Command, ctx: CommandContext): void {
  const { out, globals, connect, emit, emitAction, watch } = ctx;
  program
    .command('targets')
    .description('list targets with their last backup, change-capture window and health')
    .option('--env <env>', 'only this environment')
    .option('--org <org>', 'only this organization')
    .option('--project <project>', 'only this project')
    .addOption(new Option('--health <health>', 'only this health').choices(HEALTHS))
    .option('--q <text>', 'free-text search')
    .addHelpText('after', examples(
      ['strata targets', 'every target you may see'],
      ['strata targets --health failing', 'targets whose last backup failed'],
      ['strata targets --env prod --q orders', 'prod targets matching "orders"'],
      ['strata targets -o json', 'the API\'s answer as JSON'],
    ))
    .action(async (opts: TargetFilters, cmd: Command) => {
      const c = await connect(cmd);
      const query: TargetFilters = { env: opts.env, org: opts.org, project: opts.project, health: opts.health, q: opts.q };
      emit(cmd, await expectData(c.api.GET('/targets', { params: { query } })), render.targets);
    });

  program
    .command('target')
    .description('show one target')
    .argument('<target>', 'NS/NAME or NAME')
    .addHelpText('after', examples(['strata target prod/orders'], ['strata target orders', 'namespace default']))
    .action(async (ref: string, _opts: unknown, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/targets/{ns}/{name}', { params: { path: refParams(r) } })), render.targetDetail);
    });

  for (const verb of ['suspend', 'resume'] as const) {
    program
      .command(verb)
      .description(verb === 'suspend' ? 'pause scheduled backups and change streams of a target' : 'continue scheduled backups and streams')
      .argument('<target>', 'NS/NAME or NAME')
      .option('--reason <text>', 'reason recorded in the audit log')
      .addHelpText('after', examples([`strata ${verb} prod/orders${verb === 'suspend' ? ' --reason "maintenance"' : ''}`]))
      .action(async (ref: string, opts: { reason?: string }, cmd: Command) => {
        const r = parseRef(ref);
        const c = await connect(cmd);
        const init = { params: { path: refParams(r) }, body: reasonBody(opts.reason) };
        const answer = verb === 'suspend' ? c.api.POST('/targets/{ns}/{name}/suspend', init) : c.api.POST('/targets/{ns}/{name}/resume', init);
        emitAction(cmd, await expectData(answer));
      });
  }

  program
    .command('backup-now')
    .description('start a full backup of a target')
    .argument('<target>', 'NS/NAME or NAME')
    .option('--reason <text>', 'reason recorded with the backup')
    .option('--skip-load-guard', "run even while the policy's load guard would postpone it (a postponed run starts now)")
    .option('-w, --watch', 'follow the backup until it succeeds or fails')
    .option('--timeout <duration>', 'with --watch: give up after this long', durationArg, '30m')
    .addHelpText('after', examples(
      ['strata backup-now prod/orders --reason "before migration"'],
      ['strata backup-now prod/orders --watch', 'follow it; exit 0 when it succeeds, 1 when it fails'],
      ['strata backup-now prod/orders --watch --timeout 1h'],
      ['strata backup-now prod/orders --skip-load-guard', 'do not measure the source first, never postpone'],
    ))
    .action(async (ref: string, opts: { reason?: string; skipLoadGuard?: boolean; watch?: boolean; timeout: string }, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      const start = (): Promise<Action> =>
        expectData(c.api.POST('/targets/{ns}/{name}/backup-now', { params: { path: refParams(r), ...(opts.skipLoadGuard ? { query: { skipLoadGuard: true } } : {}) }, body: reasonBody(opts.reason) }));
      if (!opts.watch) {
        emitAction(cmd, await start());
        return;
      }
      const result = await watch(cmd, c, 'backup', r, start, opts.timeout, (o) => backupRunEvent(c, o));
      if (result.phase !== 'succeeded') throw new ExitCode(result.code);
      if (globals(cmd).output === 'text') out(`backup ${result.ref} succeeded\n`);
    });

  program
    .command('backups')
    .description('list the backup runs of a target, newest first: each with its phase; failed ones with their error')
    .argument('<target>', 'NS/NAME or NAME')
    .option('--limit <n>', 'at most this many (1-1000, server default 100)', intArg(1, 1000))
    .addHelpText('after', examples(
      ['strata backups prod/orders', 'only Succeeded backups can be restored'],
      ['strata backups orders --limit 5', 'the five newest runs of default/orders'],
      ['strata backup <id>', 'one run in full (a failed run: its error)'],
    ))
    .action(async (ref: string, opts: { limit?: number }, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      const init = { params: { path: refParams(r), query: { limit: opts.limit } } };
      emit(cmd, await expectData(c.api.GET('/targets/{ns}/{name}/backups', init)), render.backups);
    });

}
