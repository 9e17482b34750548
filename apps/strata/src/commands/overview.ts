/** The strata CLI: `strata whoami` and `strata settings`. */
import type { Command } from 'commander';
import { expectData } from '@strata/client';
import * as render from '../render.ts';
import type { CommandContext } from '../context.ts';
import { examples } from '../help.ts';

export function registerOverview(program: Command, ctx: CommandContext): void {
  const { connect, emit } = ctx;
  program
    .command('whoami')
    .description('show the signed-in principal and its role')
    .addHelpText('after', examples(['strata whoami'], ['strata whoami -o json']))
    .action(async (_opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/whoami')), render.whoami);
    });

  program
    .command('settings')
    .description('show stores, policies and the catalog state')
    .addHelpText('after', examples(['strata settings']))
    .action(async (_opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/settings')), render.settings);
    });

}
