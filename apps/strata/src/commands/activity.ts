/** The strata CLI: `strata activity`, `audit` and `events`. */
import type { Command } from 'commander';
import { expectData } from '@strata/client';
import { eventOf, streamEvents } from '../events.ts';
import * as render from '../render.ts';
import { ExitCode } from '../cli-types.ts';
import { intArg, linkedController } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { examples } from '../help.ts';

export function registerActivity(program: Command, ctx: CommandContext): void {
  const { io, out, globals, connect, emit } = ctx;
  program
    .command('activity')
    .description('recent and running backups and restores')
    .option('--limit <n>', 'at most this many (1-500, server default 50)', intArg(1, 500))
    .addHelpText('after', examples(['strata activity'], ['strata activity --limit 10 -o json']))
    .action(async (opts: { limit?: number }, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/activity', { params: { query: { limit: opts.limit } } })), render.activity);
    });

  program
    .command('audit')
    .description('recent audit events of the answering replica, newest first')
    .option('--action <action>', 'only this action')
    .option('--user <user>', 'only this user')
    .option('--limit <n>', 'at most this many (1-1000, server default 100)', intArg(1, 1000))
    .addHelpText('after', examples(['strata audit --action applyResources'], ['strata audit --user ops@example.com --limit 20']))
    .action(async (opts: { action?: string; user?: string; limit?: number }, cmd: Command) => {
      const c = await connect(cmd);
      const query = { action: opts.action, user: opts.user, limit: opts.limit };
      emit(cmd, await expectData(c.api.GET('/audit', { params: { query } })), render.audit);
    });

  program
    .command('events')
    .description('print server events (backup, restore, sandbox, target, catalog) until interrupted')
    .option('--kind <kind>', 'only events of this kind')
    .option('--count <n>', 'stop after this many events', intArg(1, Number.MAX_SAFE_INTEGER))
    .addHelpText('after', examples(['strata events', 'until Ctrl-C'], ['strata events --kind backup --count 10'], ['strata events -o json', 'one JSON object per line']))
    .action(async (opts: { kind?: string; count?: number }, cmd: Command) => {
      const c = await connect(cmd);
      const json = globals(cmd).output !== 'text';
      const controller = linkedController(io.signal);
      let seen = 0;
      const outcome = await streamEvents(c, (e) => {
        const ev = eventOf(e);
        if (opts.kind && ev.kind !== opts.kind) return false;
        out(json ? JSON.stringify(e.data ?? e.raw) + '\n' : render.eventLine(ev) + '\n');
        seen++;
        return opts.count !== undefined && seen >= opts.count;
      }, controller.signal);
      if (outcome === 'aborted') throw new ExitCode(130);
    });

}
