/** The strata CLI: `strata changes`, what a target's change log did, segment by segment. */
import { InvalidArgumentError, type Command } from 'commander';
import { expectData } from '@strata/client';
import { isDuration, isTimestamp } from '../format.ts';
import * as render from '../render.ts';
import { parseRef, refParams } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { examples } from '../help.ts';

function sinceArg(value: string): string {
  if (!isDuration(value) && !isTimestamp(value)) throw new InvalidArgumentError('expected a duration before now such as 2h or 7d, or an RFC 3339 time such as 2026-03-01T09:00:00Z.');
  return value;
}

function untilArg(value: string): string {
  if (value !== 'latest' && !isTimestamp(value)) throw new InvalidArgumentError('expected an RFC 3339 time such as 2026-03-01T12:00:00Z, or "latest".');
  return value;
}

export function registerChanges(program: Command, ctx: CommandContext): void {
  const { connect, emit } = ctx;
  program
    .command('changes')
    .description("what a target's change log did: each segment's commits, tables changed and schema statements")
    .argument('<target>', 'NS/NAME or NAME')
    .option('--since <when>', 'from this long ago (2h, 7d) or this time (RFC 3339); the server default is 24h', sinceArg)
    .option('--until <time>', 'up to this time (RFC 3339) or "latest" (the default)', untilArg)
    .addHelpText('after', examples(
      ['strata changes prod/orders --since 2h', 'one line per segment: time, commits, what it did; then the totals by table'],
      ['strata changes prod/orders --since 2026-03-01T09:00:00Z --until 2026-03-01T12:00:00Z --output json', 'the ChangeSummary as the API answers it'],
    ))
    .action(async (ref: string, opts: { since?: string; until?: string }, cmd: Command) => {
      const r = parseRef(ref);
      const c = await connect(cmd);
      const query = { ...(opts.since ? { since: opts.since } : {}), ...(opts.until ? { until: opts.until } : {}) };
      emit(cmd, await expectData(c.api.GET('/targets/{ns}/{name}/changes', { params: { path: refParams(r), query } })), render.changes);
    });
}
