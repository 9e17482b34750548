/** PostgreSQL: Finding and calling `pg_dump`: binaries, connection arguments, dump arguments, the dump process. */
import fs from 'node:fs';
import path from 'node:path';
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import { compressingFilter } from '../compress-filter.ts';
import { findExecutable, pathDirs, runDump, toolEnv, toolVersion } from '../process.ts';
import type { ToolStep } from '../process.ts';
import type { DumpOptions, DumpProcess } from '../types.ts';
import { APPLICATION_NAME, quoteIdent } from './shared.ts';

/** Directories with PostgreSQL client tools, best first: STRATA_PG_BINDIR, the newest /usr/lib/postgresql/<n>/bin, PATH. */
export function pgBinDirs(): string[] {
  const dirs: string[] = [];
  if (process.env.STRATA_PG_BINDIR) dirs.push(process.env.STRATA_PG_BINDIR);
  for (const root of ['/usr/lib/postgresql', '/usr/local/pgsql']) {
    let entries: string[];
    try {
      entries = fs.readdirSync(root);
    } catch {
      continue;
    }
    entries.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    for (const entry of entries) dirs.push(path.join(root, entry, 'bin'));
  }
  return [...dirs, ...pathDirs(), '/usr/bin', '/usr/local/bin'];
}

/** The newest pg_dump/pg_restore: a newer client reads older servers, never the reverse. */
export function pgTool(name: 'pg_dump' | 'pg_restore'): string {
  return findExecutable(name, pgBinDirs()) ?? name;
}

export function connectionArgs(access: DatabaseAccess): string[] {
  return ['--no-password', `--host=${access.host}`, `--port=${access.port}`, `--username=${access.username}`];
}

export function toolEnvFor(access: DatabaseAccess): NodeJS.ProcessEnv {
  return toolEnv({ PGPASSWORD: access.password, PGAPPNAME: APPLICATION_NAME, PGCONNECT_TIMEOUT: '15' });
}

/** `--dbname` treats values with `=` or a URI prefix as connection strings: pass those as `dbname='...'`. */
export function dbnameArg(database: string): string {
  if (!database.includes('=') && !/^postgres(ql)?:\/\//i.test(database)) return `--dbname=${database}`;
  return `--dbname=dbname='${database.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/**
 * A pg_dump table pattern for `table` (in any schema) or `schema.table`, matched exactly (quoted).
 * Names that already contain pattern characters (`*`, `?`, `"`) are passed as written.
 */
export function tablePattern(name: string): string {
  if (/[*?"]/.test(name)) return name;
  const dot = name.indexOf('.');
  return dot < 0 ? `*.${quoteIdent(name)}` : `${quoteIdent(name.slice(0, dot))}.${quoteIdent(name.slice(dot + 1))}`;
}

export function pgDumpArgs(access: DatabaseAccess, database: string, options: DumpOptions): string[] {
  return [
    '--format=custom',
    '--compress=0',
    ...connectionArgs(access),
    dbnameArg(database),
    ...(options.includeTables ?? []).map((t) => `--table=${tablePattern(t)}`),
    ...options.excludeTables.map((t) => `--exclude-table=${tablePattern(t)}`),
    ...options.excludeData.map((t) => `--exclude-table-data=${tablePattern(t)}`),
  ];
}

export function dump(access: DatabaseAccess, database: string, options: DumpOptions): DumpProcess {
  const compressing = compressingFilter(options.compression);
  const run = runDump('pg_dump', async () => {
    const step: ToolStep = { tool: 'pg_dump', command: pgTool('pg_dump'), args: pgDumpArgs(access, database, options), env: toolEnvFor(access), ...(compressing ? { filter: compressing.filter } : {}) };
    return { steps: [step] };
  });
  return compressing ? { ...run, compressedBy: compressing.compressedBy(run.done) } : run;
}

/** How much of the archive to read before creating the database: its TOC, with the DATABASE entry, comes first. */
export async function tools(): Promise<Record<string, string>> {
  const [dumpVersion, restoreVersion] = await Promise.all([toolVersion(pgTool('pg_dump')), toolVersion(pgTool('pg_restore'))]);
  return { pg_dump: dumpVersion, pg_restore: restoreVersion };
}
