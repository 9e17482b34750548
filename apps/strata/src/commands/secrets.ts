/** The strata CLI: `strata secret set|list|delete` (values are never shown). */
import type { Command } from 'commander';
import { expectData } from '@strata/client';
import * as render from '../render.ts';
import { UsageError } from '../cli-types.ts';
import { parseRef, refParams, collect, parsePair, readInput } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { examples } from '../help.ts';

export function registerSecrets(program: Command, ctx: CommandContext): void {
  const { io, stdinUse, connect, emit, emitAction } = ctx;
  const secret = program
    .command('secret')
    .description('manage secrets referenced by resources (values are never shown)')
    .addHelpText('after', examples(['strata secret set strata/age-identity --from-file identity=./key.txt'], ['strata secret list']));
  secret
    .command('set')
    .description('create or replace a secret')
    .argument('<secret>', 'NS/NAME or NAME')
    .argument('[pairs...]', 'KEY=VALUE pairs')
    .option('--from-file <key=path>', 'value of KEY read from a file ("-" reads stdin); repeatable', collect, [] as string[])
    .addHelpText('after', examples(
      ['strata secret set strata/s3 accessKeyId=AKIA... secretAccessKey=...', 'replaces every key of the secret'],
      ['strata secret set strata/age-identity --from-file identity=./key.txt', 'keeps values out of the shell history'],
    ))
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
      emitAction(cmd, await expectData(c.api.PUT('/secrets/{ns}/{name}', { params: { path: refParams(r) }, body: { data } })));
    });
  secret
    .command('list')
    .description('list secrets and their keys')
    .addHelpText('after', examples(['strata secret list', 'names and key names, never values']))
    .action(async (_opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/secrets')), render.secrets);
    });
  secret
    .command('delete')
    .description('delete a secret')
    .argument('<secret>', 'NS/NAME or NAME')
    .addHelpText('after', examples(['strata secret delete strata/old-creds']))
    .action(async (ref: string, _opts: unknown, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      emitAction(cmd, await expectData(c.api.DELETE('/secrets/{ns}/{name}', { params: { path: refParams(r) } })));
    });

}
