/** The strata CLI: `strata previews`, the masked sample rows of one change-log segment. */
import type { Command } from 'commander';
import { expectData } from '@strata/client';
import * as render from '../render.ts';
import { parseRef, refParams } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { examples } from '../help.ts';

export function registerPreviews(program: Command, ctx: CommandContext): void {
  const { connect, emit } = ctx;
  program
    .command('previews')
    .description("masked sample rows of one change-log segment: per table, inserts, updates (before → after) and deletes")
    .argument('<target>', 'NS/NAME or NAME')
    .argument('<segment>', "the segment's name, as `strata changes` lists it (e.g. mariadb-bin.000004)")
    .addHelpText('after', examples(
      ['strata previews prod/orders mariadb-bin.000004', 'per table: the sample rows inserted, updated (before → after) and deleted; masked columns show ***'],
      ['strata previews prod/orders mariadb-bin.000004 --output json', 'the PreviewsResult as the API answers it'],
    ))
    .action(async (ref: string, segment: string, _opts: unknown, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/targets/{ns}/{name}/segments/{segment}/previews', { params: { path: { ...refParams(r), segment } } })), render.previews);
    });
}
