/** The strata CLI: One backup: detail, inventory, the diff of two, pin and unpin; a store's garbage collection. */
import type { Command } from 'commander';
import { expectData, type Schema } from '@strata/client';
import { isDate, isDuration, isTimestamp } from '../format.ts';
import * as render from '../render.ts';
import { UsageError } from '../cli-types.ts';
import { parseRef, reasonBody, refParams } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { examples } from '../help.ts';

export function registerBackups(program: Command, ctx: CommandContext): void {
  const { connect, emit, emitAction } = ctx;
  program
    .command('backup')
    .description('show one backup run: its phase, a failed run\'s error, the manifest summary and tags')
    .argument('<id>', 'backup id')
    .addHelpText('after', examples(['strata backups prod/orders', 'find the id'], ['strata backup 20250301t030000z-ab12cd34']))
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/backups/{id}', { params: { path: { id } } })), render.backupDetail);
    });

  program
    .command('inventory')
    .description('show what the databases looked like at backup time (no row data)')
    .argument('<id>', 'backup id')
    .addHelpText('after', examples(['strata inventory 20250301t030000z-ab12cd34']))
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/backups/{id}/inventory', { params: { path: { id } } })), render.inventory);
    });

  program
    .command('diff')
    .description('show what changed between two backups of one target: schema, rows, sizes, migrations, and the change log between them (from their inventories; nothing is restored)')
    .argument('<backup>', 'backup id')
    .argument('<other>', 'another backup id of the same target (either order: the older is the "from")')
    .addHelpText('after', examples(
      ['strata diff 20250301t030000z-ab12cd34 20250302t030000z-ef56ab78'],
      ['strata diff 20250301t030000z-ab12cd34 20250302t030000z-ef56ab78 --output json', 'the DiffResult as the API answers it'],
    ))
    .action(async (id: string, other: string, _opts: unknown, cmd: Command) => {
      const c = await connect(cmd);
      emit(cmd, await expectData(c.api.GET('/backups/{id}/diff/{other}', { params: { path: { id, other } } })), render.backupDiff);
    });

  program
    .command('pin')
    .description('hold a backup against retention')
    .argument('<id>', 'backup id')
    .option('--expires <when>', 'a duration such as 30d, a date (2027-01-01) or an RFC 3339 time; omitted means forever')
    .option('--reason <text>', 'why the backup is kept')
    .addHelpText('after', examples(
      ['strata pin 20250301t030000z-ab12cd34 --expires 30d --reason "audit 2025"'],
      ['strata pin 20250301t030000z-ab12cd34 --expires 2027-01-01 --reason "legal hold"', 'kept past its rules until that day'],
      ['strata pin 20250301t030000z-ab12cd34', 'forever'],
    ))
    .action(async (id: string, opts: { expires?: string; reason?: string }, cmd: Command) => {
      if (opts.expires !== undefined && !isDuration(opts.expires) && !isTimestamp(opts.expires) && !isDate(opts.expires)) {
        throw new UsageError(`invalid --expires "${opts.expires}": expected a duration such as 30d, a date such as 2027-01-01 or an RFC 3339 time`);
      }
      const body: Schema<'PinRequest'> = {};
      if (opts.expires) body.expires = opts.expires;
      if (opts.reason) body.reason = opts.reason;
      const c = await connect(cmd);
      emitAction(cmd, await expectData(c.api.POST('/backups/{id}/pin', { params: { path: { id } }, body })));
    });

  program
    .command('unpin')
    .description('release a pinned backup to retention')
    .argument('<id>', 'backup id')
    .option('--reason <text>', 'reason recorded in the audit log')
    .addHelpText('after', examples(['strata unpin 20250301t030000z-ab12cd34 --reason "audit closed"']))
    .action(async (id: string, opts: { reason?: string }, cmd: Command) => {
      const c = await connect(cmd);
      emitAction(cmd, await expectData(c.api.POST('/backups/{id}/unpin', { params: { path: { id } }, body: reasonBody(opts.reason) })));
    });

  program
    .command('gc')
    .description("delete what no kept backup or window needs from a store (expired backups' objects, expired change log)")
    .argument('<store>', 'the BackupStore, NAMESPACE/NAME or NAME (namespace default)')
    .option('--dry-run', 'list what would be deleted; delete nothing')
    .addHelpText('after', examples(['strata gc default/local --dry-run', 'what would go'], ['strata gc local', 'collect now (the catalog also does it after expiries)']))
    .action(async (store: string, opts: { dryRun?: boolean }, cmd: Command) => {
      const c = await connect(cmd);
      const query = opts.dryRun ? { dryRun: true } : {};
      emit(cmd, await expectData(c.api.POST('/stores/{ns}/{name}/gc', { params: { path: refParams(parseRef(store, 'STORE')), query } })), render.gcResult);
    });

}
