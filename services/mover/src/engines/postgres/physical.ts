/**
 * PostgreSQL physical backups: `pg_basebackup` of the whole server as one tar stream on stdout, with the WAL
 * needed to make it consistent (`-X fetch`) and the server's backup manifest inside, and the positions it
 * reports on stderr.
 */
import type { DatabaseAccess } from '@sigil/proto/strata-jobs';
import type { CompressionOptions } from '@strata/stream/zstd';
import { compressingFilter } from '../compress-filter.ts';
import { findExecutable, runDump, toolVersion } from '../process.ts';
import type { DumpProcess, Position } from '../types.ts';
import { withClient } from './shared.ts';
import { connectionArgs, pgBinDirs, toolEnvFor } from './tools.ts';
import { parseLsn, walFileName } from './wal.ts';

export interface BaseBackupProcess extends DumpProcess {
  /** startLSN, endLSN, startWAL and timeline as pg_basebackup reported them; resolves once it exited. */
  position: Promise<Position>;
}

const START = /write-ahead log start point: ([0-9A-F]+\/[0-9A-F]+) on timeline (\d+)/;
const END = /write-ahead log end point: ([0-9A-F]+\/[0-9A-F]+)/;

export function pgBasebackup(): string {
  return findExecutable('pg_basebackup', pgBinDirs()) ?? 'pg_basebackup';
}

export function baseBackupArgs(access: DatabaseAccess, label: string): string[] {
  return ['--pgdata=-', '--format=tar', '--wal-method=fetch', '--checkpoint=fast', `--label=${label}`, '--verbose', ...connectionArgs(access)];
}

/**
 * Spawns pg_basebackup; stdout is the tar stream of the whole server (a single tablespace), compressed by the zstd
 * program on its way out when `compression` asks for zstd and the program is there.
 */
export function baseBackup(access: DatabaseAccess, label: string, compression?: CompressionOptions): BaseBackupProcess {
  let said = '';
  const found: Position = {};
  const compressing = compressingFilter(compression);
  const dump = runDump('pg_basebackup', async () => ({
    steps: [
      {
        tool: 'pg_basebackup',
        command: pgBasebackup(),
        args: baseBackupArgs(access, label),
        env: toolEnvFor(access),
        ...(compressing ? { filter: compressing.filter } : {}),
        onStderr: (chunk) => {
          said += chunk.toString('utf8');
          const start = START.exec(said);
          if (start?.[1] && !found.startLSN) {
            found.startLSN = start[1];
            found.timeline = Number(start[2]);
            found.startWAL = walFileName(found.timeline, parseLsn(start[1]));
          }
          const end = END.exec(said);
          if (end?.[1]) found.endLSN = end[1];
          if (said.length > 64 * 1024) said = said.slice(-4096);
        },
      },
    ],
  }));
  const position = dump.done.then(() => {
    if (!found.startLSN || !found.endLSN) throw new Error('pg_basebackup did not report its WAL start and end points');
    return found;
  });
  position.catch(() => {});
  return { ...dump, position, ...(compressing ? { compressedBy: compressing.compressedBy(dump.done) } : {}) };
}

/** The bootstrap superuser (oid 10): a recovered copy of the server is entered as this role. */
export async function bootstrapSuperuser(access: DatabaseAccess): Promise<string> {
  return await withClient(access, undefined, async (client) => (await client.query<{ name: string }>('SELECT rolname AS name FROM pg_roles WHERE oid = 10')).rows[0]?.name ?? 'postgres');
}

export async function baseBackupVersion(): Promise<string> {
  return await toolVersion(pgBasebackup());
}
