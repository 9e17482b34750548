import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/** The file `strata quickstart` writes in the state folder; once it is there the stack never applies it again. */
export const QUICKSTART_FILE = 'strata-quickstart.yaml';

/** Runs the strata CLI with these arguments and environment; rejects with its output when it fails. */
export type RunStrata = (args: string[], env: NodeJS.ProcessEnv) => Promise<void>;

const strataMain = path.resolve(import.meta.dirname, '../../../apps/strata/src/main.ts');
const execFileAsync = promisify(execFile);

/** The CLI as a user runs it, on this process's Node (24: the CLI is TypeScript run by type stripping). */
export const runStrata: RunStrata = async (args, env) => {
  try {
    await execFileAsync(process.execPath, [strataMain, ...args], { env, timeout: 120_000 });
  } catch (error) {
    const { stderr, stdout, message } = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`strata ${args[0]}: ${(stderr || stdout || message).trim()}`, { cause: error });
  }
};

export interface QuickstartOptions {
  stateDir: string;
  gatewayUrl: string;
  demo: { postgres: boolean; mysql: boolean };
  env: NodeJS.ProcessEnv;
  run?: RunStrata;
}

/**
 * `npm start` on a first start: Strata gets the quickstart's resources (a store in the stack's S3, the nightly policy
 * with change capture, targets for the demo databases; as `strata quickstart --apply` writes them) and a first backup
 * of each target, so the console shows restore windows that move without anyone opening a terminal. Only when both
 * servers are the stack's own (their demo database `shop` is what the targets back up: a server the environment names
 * is never backed up unasked); once per state folder (deleted targets stay deleted); `STRATA_QUICKSTART=0` skips it.
 * Answers what happened, for the start-up summary.
 */
export async function applyQuickstartOnce(options: QuickstartOptions): Promise<string> {
  const { stateDir, gatewayUrl, demo, env } = options;
  const file = path.join(stateDir, QUICKSTART_FILE);
  if (env.STRATA_QUICKSTART === '0') return 'not applied (STRATA_QUICKSTART=0)';
  if (existsSync(file)) return `applied on an earlier start (${file})`;
  if (!demo.postgres || !demo.mysql) return 'not applied: the stack backs up only demo databases of servers it runs itself (see `strata quickstart`)';
  const run = options.run ?? runStrata;
  const cli = { ...env, STRATA_CONFIG: path.join(stateDir, 'strata-cli.json'), SIGIL_STATE_DIR: stateDir, PWD: stateDir };
  await run(['login', '--server', gatewayUrl, '--email', 'quickstart@example.com'], cli);
  await run(['quickstart', '--apply', '--file', file], cli);
  for (const target of ['default/postgres', 'default/mariadb']) await run(['backup-now', target, '--reason', 'first backup of the quickstart'], cli);
  return `applied: targets default/postgres and default/mariadb back up the demo databases (first backups running); resources in ${file}`;
}
