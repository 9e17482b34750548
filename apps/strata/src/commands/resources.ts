/** The strata CLI: `strata apply`, `get` and `delete` of declarative resources. */
import type { Command } from 'commander';
import YAML from 'yaml';
import { ApiError, expectData, type Schema, type StrataClient } from '@strata/client';
import * as render from '../render.ts';
import { UsageError } from '../cli-types.ts';
import { parseRef, parseKind, refParams, collect, readInput, checkDocument } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { examples } from '../help.ts';

interface ApplyInput {
  file: string;
  body: string;
  contentType: string;
}

/** Sends one file as written (YAML or JSON), so the server reports errors against the user's text. */
async function applyOne(c: StrataClient, input: ApplyInput, several: boolean): Promise<Schema<'ApplyResult'>> {
  try {
    return await expectData(c.api.POST('/resources', {
      body: input.body,
      bodySerializer: () => input.body,
      headers: { 'content-type': input.contentType },
    }));
  } catch (e) {
    if (e instanceof ApiError && several) throw new ApiError(e.status, `${input.file}: ${e.message}`);
    throw e;
  }
}

export function registerResources(program: Command, ctx: CommandContext): void {
  const { io, stdinUse, out, globals, connect, emit, emitAction } = ctx;
  program
    .command('apply')
    .description('create or update declarative resources from YAML or JSON files')
    .requiredOption('-f, --filename <file>', 'file to apply ("-" reads stdin); repeatable', collect, [] as string[])
    .addHelpText('after', examples(
      ['strata apply -f stack.yaml', 'every mistake in the file is reported at once; nothing is applied then'],
      ['strata apply -f store.yaml -f policy.yaml', 'one request per file, in order'],
      ['kubectl kustomize overlays/prod | strata apply -f -'],
    ))
    .action(async (opts: { filename: string[] }, cmd: Command) => {
      if (opts.filename.length === 0) throw new UsageError('pass at least one -f FILE');
      const inputs: ApplyInput[] = [];
      for (const file of opts.filename) {
        const body = await readInput(file, io, stdinUse);
        const label = file === '-' ? 'stdin' : file;
        inputs.push({ file: label, body, contentType: checkDocument(label, body) });
      }
      const c = await connect(cmd);
      const results: Array<Schema<'ApplyResult'>> = [];
      for (const input of inputs) {
        const result = await applyOne(c, input, inputs.length > 1);
        results.push(result);
        if (globals(cmd).output === 'text') out(render.applyResult(result));
      }
      if (globals(cmd).output !== 'text') emit(cmd, results.length === 1 ? results[0] : results, () => '');
    });

  const get = program
    .command('get')
    .description('read declarative resources')
    .addHelpText('after', examples(['strata get resources --kind BackupTarget'], ['strata get resource BackupTarget prod/orders']));
  get
    .command('resources')
    .description('list declarative resources')
    .option('--kind <kind>', 'only this kind (BackupTarget, BackupPolicy, BackupStore, Backup, Restore, Sandbox)')
    .addHelpText('after', examples(['strata get resources', 'kind, name, phase and message of each'], ['strata get resources --kind backuptargets']))
    .action(async (opts: { kind?: string }, cmd: Command) => {
      const kind = opts.kind ? parseKind(opts.kind) : undefined;
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/resources', { params: { query: { kind } } })), render.resources);
    });
  get
    .command('resource')
    .description('print one resource document (YAML by default)')
    .argument('<kind>', 'resource kind, e.g. BackupTarget')
    .argument('<ref>', 'NS/NAME or NAME')
    .addHelpText('after', examples(['strata get resource BackupTarget prod/orders', 'spec and status as YAML'], ['strata get resource backupstore local -o json']))
    .action(async (kind: string, ref: string, _opts: unknown, cmd: Command) => {
      const path = { kind: parseKind(kind), ...refParams(parseRef(ref)) };
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/resources/{kind}/{ns}/{name}', { params: { path } })), (d) => YAML.stringify(d));
    });

  const del = program
    .command('delete')
    .description('delete declarative resources')
    .addHelpText('after', examples(['strata delete resource BackupTarget prod/orders']));
  del
    .command('resource')
    .description('delete one resource')
    .argument('<kind>', 'resource kind, e.g. BackupTarget')
    .argument('<ref>', 'NS/NAME or NAME')
    .addHelpText('after', examples(['strata delete resource BackupTarget prod/orders', 'its backups stay in the store']))
    .action(async (kind: string, ref: string, _opts: unknown, cmd: Command) => {
      const path = { kind: parseKind(kind), ...refParams(parseRef(ref)) };
      const c = await connect(cmd);
      emitAction(cmd, await expectData(c.api.DELETE('/resources/{kind}/{ns}/{name}', { params: { path } })));
    });

}
