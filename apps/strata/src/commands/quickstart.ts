/** The strata CLI: `strata quickstart`, ready resources for the local stack without editing a file. */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { generateAgeIdentity } from '@strata/stream/age';
import { expectData } from '@strata/client';
import { UsageError } from '../cli-types.ts';
import type { CommandContext } from '../context.ts';
import * as render from '../render.ts';
import { QUICKSTART_TARGETS, quickstartDocuments, quickstartYaml, type StackFacts } from '../quickstart/documents.ts';

interface QuickstartOptions {
  stack?: string;
  file: string;
  apply?: boolean;
  force?: boolean;
  namespace: string;
  bucket: string;
  postgresDatabases?: string;
  mysqlDatabases?: string;
}

const FACTS_FILE = 'stack.json';

/** The local stack's state folder: --stack, else $SIGIL_STATE_DIR, else `.local/stack` here or in a parent folder. */
function findStackDir(given: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  if (given) return path.resolve(cwd, given);
  if (env.SIGIL_STATE_DIR) return path.resolve(cwd, env.SIGIL_STATE_DIR);
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, '.local', 'stack', FACTS_FILE))) return path.join(dir, '.local', 'stack');
    if (path.dirname(dir) === dir) break;
  }
  throw new UsageError('no running local stack found (.local/stack/stack.json): start it with `bash scripts/up.sh`, or pass --stack DIR');
}

async function readFacts(dir: string): Promise<StackFacts> {
  const file = path.join(dir, FACTS_FILE);
  try {
    return JSON.parse(await readFile(file, 'utf8')) as StackFacts;
  } catch (error) {
    throw new UsageError(`cannot read ${file} (${(error as Error).message}): is the local stack running? \`bash scripts/up.sh\``);
  }
}

const list = (value: string | undefined): string[] => (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);

/** Whether the quickstart's store is in the catalog already. */
async function storeExists(c: Awaited<ReturnType<CommandContext['connect']>>, namespace: string): Promise<boolean> {
  const { response } = await c.api.GET('/resources/{kind}/{ns}/{name}', { params: { path: { kind: 'BackupStore', ns: namespace, name: 'local' } } });
  if (response.status === 404) return false;
  if (response.ok) return true;
  throw new UsageError(`cannot tell whether the quickstart was applied: GET /resources/BackupStore/${namespace}/local answered ${response.status}`);
}

export function registerQuickstart(program: Command, ctx: CommandContext): void {
  const { io, out, connect, emit } = ctx;
  program
    .command('quickstart')
    .description("write (or apply) ready resources for the local stack: its S3 as a store with a new age key, a nightly policy, targets for its Postgres and MariaDB")
    .option('--stack <dir>', 'state folder of the local stack (default: $SIGIL_STATE_DIR, else .local/stack here or above)')
    .option('-f, --file <file>', 'where to write the resources', 'stack.yaml')
    .option('--apply', 'apply them too (after `strata login`)')
    .option('--force', 'overwrite the file if it exists')
    .option('-n, --namespace <ns>', 'namespace of the resources', 'default')
    .option('--bucket <name>', 'bucket of the store (created on first backup)', 'strata-backups')
    .option('--postgres-databases <a,b>', 'databases of the postgres target (default: the stack\'s demo database "shop" in a server it runs itself, else every database)')
    .option('--mysql-databases <a,b>', 'databases of the mariadb target (default: the stack\'s demo database "shop" in a server it runs itself, else every database)')
    .addHelpText(
      'after',
      `
Examples:
  strata quickstart                                   # writes stack.yaml, then: strata apply -f stack.yaml
  strata quickstart --apply                           # writes and applies it
  strata quickstart --apply --postgres-databases app --mysql-databases shop
  strata backup-now default/${QUICKSTART_TARGETS.postgres} --watch`,
    )
    .action(async (opts: QuickstartOptions, cmd: Command) => {
      const cwd = io.env.PWD ?? process.cwd();
      const facts = await readFacts(findStackDir(opts.stack, io.env, cwd));
      const file = path.resolve(cwd, opts.file);
      if (existsSync(file) && !opts.force) throw new UsageError(`${opts.file} exists: pass --force to overwrite it, or --file another.yaml`);
      if (opts.apply && (await storeExists(await connect(cmd), opts.namespace))) {
        // Applying again would give the store a new age key: backups made with the old one could not be restored.
        out(`already applied: BackupStore ${opts.namespace}/local exists (the local stack applies the quickstart on its first start); nothing changed. \`strata targets\` lists what it backs up.\n`);
        return;
      }
      const { identity, recipient } = await generateAgeIdentity();
      const documents = quickstartDocuments(facts, {
        namespace: opts.namespace,
        bucket: opts.bucket,
        identity,
        recipient,
        databases: { postgres: list(opts.postgresDatabases), mysql: list(opts.mysqlDatabases) },
      });
      const yaml = quickstartYaml(documents);
      // It holds the store's private key and local credentials.
      await writeFile(file, yaml, { mode: 0o600 });
      out(`wrote ${opts.file}: secrets, BackupStore ${opts.namespace}/local (S3 ${facts.s3.endpoint}, bucket ${opts.bucket}, age ${recipient}), BackupPolicy ${opts.namespace}/nightly, BackupTargets ${opts.namespace}/${QUICKSTART_TARGETS.postgres} and ${opts.namespace}/${QUICKSTART_TARGETS.mysql}\n`);
      if (!opts.apply) {
        out(`next: strata apply -f ${opts.file} && strata backup-now ${opts.namespace}/${QUICKSTART_TARGETS.postgres} --watch\n`);
        return;
      }
      const c = await connect(cmd);
      const result = await expectData(c.api.POST('/resources', { body: yaml, bodySerializer: () => yaml, headers: { 'content-type': 'application/yaml' } }));
      emit(cmd, result, render.applyResult);
      out(`next: strata backup-now ${opts.namespace}/${QUICKSTART_TARGETS.postgres} --watch\n`);
    });
}
