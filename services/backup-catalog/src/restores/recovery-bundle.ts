import { AppError } from '@sigil/kit/errors';
import { REPLAY_IDENTITY_STATEMENT, type SegmentObject } from '@sigil/proto/strata-jobs';
import { presignGet, putObjectUnique, type S3Client } from '@strata/stream';

interface BundleObject {
  key: string;
  sha256: string;
  compression?: string;
}

/** A selective export of the backup (manifest object of role `export`): CSV, encrypted and compressed like the dumps. */
export interface ExportObject extends BundleObject {
  name: string;
  database?: string;
  rows?: number;
}

export interface BundleContent {
  base: BundleObject;
  segments: SegmentObject[];
  /** The backup's selective exports, listed after the recovery steps. */
  exports?: ExportObject[];
  /** Recover to this time; absent: replay everything in the bundle. */
  recoverTo?: string;
  major?: number;
  ttlSeconds: number;
}

/**
 * A download of a physical restore: a README in the store with signed links to the base and each WAL segment
 * (still encrypted, as stored) and the commands that recover them by hand. Answers the README's signed link.
 */
type Where = { prefix: string; namespace: string; target: string; restoreId: string };

const unpack = (o: { compression?: string }) => (o.compression === 'none' ? 'cat' : 'zstd -d');

/** Puts the README next to the target's backups and answers its signed link. */
async function putReadme(client: S3Client, bucket: string, where: Where, lines: string[], ttlSeconds: number): Promise<string> {
  const root = where.prefix.replace(/^\/+|\/+$/g, '');
  const key = `${root ? `${root}/` : ''}${where.namespace}/${where.target}/restores/${where.restoreId}/README.md`;
  await putObjectUnique(client, bucket, key, Buffer.from(lines.join('\n'), 'utf8'), { disableConditionalPut: true, contentType: 'text/markdown; charset=utf-8' });
  return await presignGet(client, bucket, key, ttlSeconds);
}

export async function writeRecoveryBundle(client: S3Client, bucket: string, where: Where, content: BundleContent): Promise<string> {
  const lines = [
    `# Recovery bundle of ${where.namespace}/${where.target}`,
    '',
    `Links expire after ${Math.round(content.ttlSeconds / 60)} minutes. Every object is encrypted with age; you need the store's identity file.`,
    '',
    '## 1. The base backup',
    '',
    '```sh',
    'mkdir -p recovered/data recovered/wal && chmod 700 recovered/data',
    `curl -fsS '${await presignGet(client, bucket, content.base.key, content.ttlSeconds)}' | age -d -i identity.txt | ${unpack(content.base)} | tar -x -C recovered/data`,
    `# sha256 of the encrypted object: ${content.base.sha256}`,
    '```',
    '',
    `## 2. The WAL segments (${content.segments.length})`,
    '',
    '```sh',
  ];
  for (const segment of content.segments) {
    lines.push(`curl -fsS '${await presignGet(client, bucket, segment.key, content.ttlSeconds)}' | age -d -i identity.txt | ${unpack(segment)} > recovered/wal/${segment.name}${segment.partial ? '   # partial: the valid records end inside it' : ''}`);
  }
  lines.push(
    '```',
    '',
    `## 3. Recover with PostgreSQL ${content.major ?? '(the same major version as the source)'}`,
    '',
    '```sh',
    'touch recovered/data/recovery.signal',
    'cat >> recovered/data/postgresql.auto.conf <<EOF',
    `restore_command = 'cp "$PWD/recovered/wal/%f" "%p"'`,
    ...(content.recoverTo ? [`recovery_target_time = '${content.recoverTo}'`, 'recovery_target_inclusive = on'] : []),
    `recovery_target_action = 'promote'`,
    'EOF',
    `pg_ctl -D recovered/data -l recovered/recovery.log start   # as the postgres user; it recovers, then accepts connections`,
    '```',
    '',
    content.recoverTo ? `Recovery stops right after the last transaction committed at or before ${content.recoverTo}.` : 'Recovery replays every segment and stops at the end of the WAL.',
    '',
    ...(await exportLines(client, bucket, content.exports ?? [], content.ttlSeconds)),
  );
  return await putReadme(client, bucket, where, lines, content.ttlSeconds);
}

export interface BinlogBundleContent {
  dump: BundleObject & { database?: string };
  exports?: ExportObject[];
  segments: SegmentObject[];
  /** The dump's consistent position in the first binlog. */
  startPosition: number;
  recoverTo?: string;
  ttlSeconds: number;
}

type BinlogPosition = { binlogFile?: string; binlogPos?: number };

/**
 * Where a dump's replay starts: its own position (each database is dumped in its own snapshot; older backups
 * record only the backup's), in the binlog that holds it, which must be the first one given.
 */
export function replayStart(dump: { database?: string; position?: BinlogPosition }, backup: BinlogPosition | undefined, segments: SegmentObject[]): { startPosition: number; binlogs: SegmentObject[] } {
  const position = dump.position?.binlogFile ? dump.position : backup;
  if (!position?.binlogFile || position.binlogPos === undefined) throw new AppError('not-restorable', 'The backup records no binlog position; it cannot be rolled forward.');
  const first = segments.findIndex((s) => s.name === position.binlogFile);
  if (first < 0) throw new AppError('not-restorable', `The binlog ${position.binlogFile} holding the position of ${dump.database ?? 'the dump'} is not among the segments of the plan.`);
  return { startPosition: position.binlogPos, binlogs: segments.slice(first) };
}

/** A download of a MariaDB/MySQL restore to a time: the dump, the binlogs after its position, and how to replay them. */
export async function writeBinlogBundle(client: S3Client, bucket: string, where: Where, content: BinlogBundleContent): Promise<string> {
  const database = content.dump.database ?? 'DATABASE';
  const stop = content.recoverTo ? new Date(Math.floor(Date.parse(content.recoverTo) / 1000) * 1000 + 1000).toISOString().replace('T', ' ').slice(0, 19) : undefined;
  const lines = [
    `# Point-in-time bundle of ${where.namespace}/${where.target} (database ${database})`,
    '',
    `Links expire after ${Math.round(content.ttlSeconds / 60)} minutes. Every object is encrypted with age; you need the store's identity file.`,
    '',
    '```sh',
    `mariadb -e 'CREATE DATABASE restored'`,
    `curl -fsS '${await presignGet(client, bucket, content.dump.key, content.ttlSeconds)}' | age -d -i identity.txt | ${unpack(content.dump)} | mariadb restored`,
    'mkdir -p binlogs',
  ];
  for (const segment of content.segments) {
    lines.push(`curl -fsS '${await presignGet(client, bucket, segment.key, content.ttlSeconds)}' | age -d -i identity.txt | ${unpack(segment)} > binlogs/${segment.name}`);
  }
  lines.push(
    `TZ=UTC mariadb-binlog --start-position=${content.startPosition} --database=${database} --rewrite-db='${database}->restored'${stop ? ` --stop-datetime='${stop}'` : ''} ${content.segments.map((s) => `binlogs/${s.name}`).join(' ')} \\`,
    `  | sed -E '/${REPLAY_IDENTITY_STATEMENT}/Id' | mariadb restored`,
    '```',
    '',
    stop ? `The replay stops at the end of the second of ${content.recoverTo} (binlogs keep whole seconds).` : 'The replay applies every binlog in the bundle.',
    'The `sed` drops the statements that would give the replayed transactions their original GTIDs: the server logs them as new ones.',
    '',
    ...(await exportLines(client, bucket, content.exports ?? [], content.ttlSeconds)),
  );
  return await putReadme(client, bucket, where, lines, content.ttlSeconds);
}

/** The "Selective exports" section of a README: a signed link per export and the command that yields its CSV. */
async function exportLines(client: S3Client, bucket: string, exports: ExportObject[], ttlSeconds: number): Promise<string[]> {
  if (exports.length === 0) return [];
  const lines = [`## Selective exports (${exports.length})`, '', 'Each is CSV (RFC 4180, a header row; NULL is an empty field, the empty string `""`).', '', '```sh'];
  for (const e of exports) {
    const file = `${e.name.replace(/[^A-Za-z0-9._-]/g, '_')}.csv`;
    lines.push(`curl -fsS '${await presignGet(client, bucket, e.key, ttlSeconds)}' | age -d -i identity.txt | ${unpack(e)} > ${file}   # ${e.rows ?? '?'} rows from ${e.database ?? 'the first database'}; sha256 of the encrypted object: ${e.sha256}`);
  }
  lines.push('```', '');
  return lines;
}

export interface DownloadContent {
  /** The dump asked for (one database of a logical backup). */
  dump: BundleObject & { database?: string };
  exports: ExportObject[];
  ttlSeconds: number;
}

/**
 * A download of a logical backup that has selective exports: one link cannot carry the dump and the exports, so the
 * URL is a README in the store with a signed link to each (still encrypted) and the commands to read them.
 */
export async function writeDownloadBundle(client: S3Client, bucket: string, where: Where, content: DownloadContent): Promise<string> {
  const lines = [
    `# Download of ${where.namespace}/${where.target}${content.dump.database ? ` (database ${content.dump.database})` : ''}`,
    '',
    `Links expire after ${Math.round(content.ttlSeconds / 60)} minutes. Every object is encrypted with age; you need the store's identity file.`,
    '',
    '## The dump',
    '',
    '```sh',
    `curl -fsS '${await presignGet(client, bucket, content.dump.key, content.ttlSeconds)}' | age -d -i identity.txt | ${unpack(content.dump)} > dump   # sha256 of the encrypted object: ${content.dump.sha256}`,
    '```',
    '',
    ...(await exportLines(client, bucket, content.exports, content.ttlSeconds)),
  ];
  return await putReadme(client, bucket, where, lines, content.ttlSeconds);
}
