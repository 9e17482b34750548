/** PostgreSQL: Restoring with `pg_restore`: the archive's own DATABASE entry, the target database created like the source, dropping a failed one. */

import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { runRestore } from '../process.ts';
import type { RestoreOptions, RestoreProcess } from '../types.ts';
import { SYSTEM_DATABASES, num, quoteIdent, quoteLiteral, where, withClient } from './shared.ts';
import { connectionArgs, dbnameArg, pgTool, toolEnvFor } from './tools.ts';

export interface ArchiveDatabase {
  /** Option name (ENCODING, LOCALE_PROVIDER, LOCALE, LC_COLLATE, LC_CTYPE, ICU_LOCALE, ICU_RULES, ...) to its value. */
  options: Record<string, string>;
}

/** The source database's CREATE DATABASE options, from the DATABASE entry near the head of a custom-format archive. */
export function parseArchiveDatabase(head: Buffer): ArchiveDatabase | undefined {
  const text = head.toString('latin1');
  const match = /CREATE DATABASE (?:"(?:[^"]|"")*"|[^\s;]+) WITH TEMPLATE = template0((?: [A-Z_]+ = (?:'(?:[^']|'')*'|[A-Za-z0-9_]+))*);/.exec(text);
  if (!match) return undefined;
  const options: Record<string, string> = {};
  for (const m of (match[1] ?? '').matchAll(/ ([A-Z_]+) = ('(?:[^']|'')*'|[A-Za-z0-9_]+)/g)) {
    const raw = m[2] ?? '';
    options[m[1] ?? ''] = raw.startsWith("'") ? raw.slice(1, -1).replaceAll("''", "'") : raw;
  }
  // The encoding and locale are ASCII; decode them again as UTF-8 in case a value was not.
  for (const [k, v] of Object.entries(options)) options[k] = Buffer.from(v, 'latin1').toString('utf8');
  return { options };
}

/** CREATE DATABASE options this server version understands, in pg_dump's order. */
export function createOptions(options: Record<string, string>, serverVersionNum: number): Array<[string, string]> {
  const supported: Array<[string, number]> = [
    ['ENCODING', 0],
    ['LOCALE_PROVIDER', 150000],
    ['LOCALE', 130000],
    ['LC_COLLATE', 0],
    ['LC_CTYPE', 0],
    ['BUILTIN_LOCALE', 170000],
    ['ICU_LOCALE', 150000],
    ['ICU_RULES', 160000],
  ];
  const result: Array<[string, string]> = [];
  for (const [key, since] of supported) {
    const value = options[key];
    if (value !== undefined && serverVersionNum >= since) result.push([key, value]);
  }
  const provider = options.LOCALE_PROVIDER;
  if (provider && provider !== 'libc' && !result.some(([k]) => k === 'LOCALE_PROVIDER')) {
    // An ICU/builtin source on a server without providers: fall back to the server's libc default.
    return result.filter(([k]) => k === 'ENCODING');
  }
  return result;
}

export function createStatement(database: string, options: Array<[string, string]>): string {
  const rendered = options.map(([k, v]) => (k === 'LOCALE_PROVIDER' ? ` ${k} = ${v}` : ` ${k} = ${quoteLiteral(v)}`)).join('');
  return `CREATE DATABASE ${quoteIdent(database)} WITH TEMPLATE = template0${rendered}`;
}

export async function createDatabaseLike(
  access: DatabaseAccess,
  database: string,
  source: Record<string, string>,
  warnings: string[],
): Promise<void> {
  await withClient(access, undefined, async (client) => {
    const versionNum = num((await client.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`)).rows[0]?.v);
    const full = createOptions(source, versionNum);
    const attempts: Array<Array<[string, string]>> = [full];
    if (full.some(([k]) => k !== 'ENCODING')) attempts.push(full.filter(([k]) => k === 'ENCODING'));
    if (full.length > 0) attempts.push([]);
    let lastError: unknown;
    for (const [i, options] of attempts.entries()) {
      try {
        await client.query(createStatement(database, options));
        if (i > 0) {
          warnings.push(
            `database "${database}" was created with ${options.length ? options.map(([k, v]) => `${k} = ${v}`).join(', ') : "the server's default encoding and locale"} ` +
              `instead of the source's ${full.map(([k, v]) => `${k} = ${v}`).join(', ')}: ${(lastError as Error).message}`,
          );
        }
        return;
      } catch (error) {
        if ((error as { code?: string }).code === '42P04') {
          throw new Error(`database "${database}" already exists on ${where(access)}; restore into a new name or drop it first`, { cause: error });
        }
        lastError = error;
      }
    }
    throw lastError;
  });
}

export const ARCHIVE_HEAD_BYTES = 1024 * 1024;

export function restore(access: DatabaseAccess, database: string, options: RestoreOptions = {}): RestoreProcess {
  return runRestore({
    tool: 'pg_restore',
    headBytes: ARCHIVE_HEAD_BYTES,
    headComplete: (head) => parseArchiveDatabase(head) !== undefined,
    start: async (head, warnings) => {
      if (head.length < 5 || head.subarray(0, 5).toString('latin1') !== 'PGDMP') {
        throw new Error(`pg_restore: the dump is not a pg_dump custom-format archive (it starts with ${JSON.stringify(head.subarray(0, 16).toString('latin1'))})`);
      }
      const source = { ...(parseArchiveDatabase(head)?.options ?? {}) };
      if (options.charset) source.ENCODING = options.charset;
      if (options.collation) {
        for (const key of ['LOCALE_PROVIDER', 'LC_COLLATE', 'LC_CTYPE', 'ICU_LOCALE', 'ICU_RULES', 'BUILTIN_LOCALE']) delete source[key];
        source.LOCALE = options.collation;
      }
      if (!options.existing) await createDatabaseLike(access, database, source, warnings);
      return {
        step: {
          tool: 'pg_restore',
          command: pgTool('pg_restore'),
          args: [
            ...connectionArgs(access),
            dbnameArg(database),
            '--no-owner',
            '--no-acl',
            '--exit-on-error',
            '--no-tablespaces',
            // A restored copy must never start consuming its source's publications.
            '--no-subscriptions',
            // In place, all or nothing: a table that cannot be replaced (another table's foreign key needs it) changes nothing.
            ...(options.clean ? ['--clean', '--if-exists'] : []),
            ...(options.existing ? ['--single-transaction'] : []),
          ],
          env: toolEnvFor(access),
        },
        cleanup: () => (options.existing ? Promise.resolve() : dropDatabase(access, database)),
        // pg_restore leaves the planner without statistics (row estimates of -1): gather them, as after any restore.
        finish: () => withClient(access, database, async (client) => void (await client.query('ANALYZE'))),
      };
    },
  });
}

export async function dropDatabase(access: DatabaseAccess, database: string): Promise<void> {
  if (SYSTEM_DATABASES.has(database)) throw new Error(`refusing to drop the system database "${database}"`);
  await withClient(access, undefined, async (client) => {
    const versionNum = num((await client.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`)).rows[0]?.v);
    if (versionNum >= 130000) {
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(database)} WITH (FORCE)`);
      return;
    }
    await client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [database]);
    await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(database)}`);
  });
}
