// The `strata` command-line client of the Strata console API (docs/strata-cli.md).
import { Command, CommanderError, Option } from 'commander';
import { ApiError } from '@strata/client';
import { ExitCode, OUTPUTS, UsageError, VERSION, type CliIo, type RunState } from './cli-types.ts';
import { createContext } from './context.ts';
import { examples } from './help.ts';
import { registerAuth } from './commands/auth.ts';
import { registerOverview } from './commands/overview.ts';
import { registerResources } from './commands/resources.ts';
import { registerTargets } from './commands/targets.ts';
import { registerBackups } from './commands/backups.ts';
import { registerRestores } from './commands/restores.ts';
import { registerSandboxes } from './commands/sandboxes.ts';
import { registerConnect } from './commands/connect.ts';
import { registerActivity } from './commands/activity.ts';
import { registerChanges } from './commands/changes.ts';
import { registerPreviews } from './commands/previews.ts';
import { registerSecrets } from './commands/secrets.ts';
import { registerQuickstart } from './commands/quickstart.ts';

export { KINDS, UsageError, VERSION, type CliIo } from './cli-types.ts';
export { buildRestoreRequest, parseKind, parsePair, parseRef, type Ref } from './args.ts';

/** Runs one invocation (`argv` without the node and script paths) and returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const state: RunState = { hasToken: false };
  const program = buildProgram(io, state);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof ExitCode) return err.code;
    if (err instanceof CommanderError) {
      // Commander has already printed the help, the version or `error: ...`.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      if (err.code === 'commander.help') return err.exitCode === 0 ? 0 : 2;
      return 2;
    }
    if (io.signal?.aborted) return 130;
    if (err instanceof UsageError) {
      io.stderr.write(`error: ${err.message}\n`);
      return 2;
    }
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`error: ${message}\n`);
    if (err instanceof ApiError && err.status === 401) {
      const server = state.server ? ` --server ${state.server}` : '';
      io.stderr.write(
        state.hasToken
          ? `hint: the token was refused (expired?); run \`strata login${server}\` again\n`
          : `hint: not logged in; run \`strata login${server}\`\n`,
      );
    }
    return 1;
  }
}


function buildProgram(io: CliIo, state: RunState): Command {
  const ctx = createContext(io, state);
  const program = new Command('strata')
    .description('Command-line client of the Strata backup service console API.')
    .version(VERSION, '-V, --version', 'print the version')
    .addOption(new Option('--server <url>', 'the gateway\'s base URL, without /api/v1 (default: $STRATA_SERVER, then the config file)'))
    .addOption(new Option('-o, --output <format>', 'output format').choices(OUTPUTS).default('text'))
    .addHelpText('after', examples(
      ['strata login --server http://127.0.0.1:8080 --email dev@example.com'],
      ['strata quickstart --apply', 'resources for the local stack'],
      ['strata backup-now default/postgres --watch'],
      ['strata backups default/postgres'],
      ['strata restore default/postgres --mode download'],
      ['strata help restore', 'a command\'s options and examples'],
    ))
    .helpCommand(true)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: ctx.out,
      writeErr: ctx.err,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
      getOutHelpWidth: () => 100,
      getErrHelpWidth: () => 100,
    });
  registerAuth(program, ctx);
  registerOverview(program, ctx);
  registerResources(program, ctx);
  registerTargets(program, ctx);
  registerBackups(program, ctx);
  registerRestores(program, ctx);
  registerSandboxes(program, ctx);
  registerConnect(program, ctx);
  registerChanges(program, ctx);
  registerPreviews(program, ctx);
  registerActivity(program, ctx);
  registerSecrets(program, ctx);
  registerQuickstart(program, ctx);
  return program;
}
