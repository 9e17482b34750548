import type { SegmentObject } from '@sigil/proto/strata-jobs';
import { presignGet, putObjectUnique, type S3Client } from '@strata/stream';

interface BundleObject {
  key: string;
  sha256: string;
  compression?: string;
}

export interface BundleContent {
  base: BundleObject;
  segments: SegmentObject[];
  /** Recover to this time; absent: replay everything in the bundle. */
  recoverTo?: string;
  major?: number;
  ttlSeconds: number;
}

/**
 * A download of a physical restore: a README in the store with signed links to the base and each WAL segment
 * (still encrypted, as stored) and the commands that recover them by hand. Answers the README's signed link.
 */
export async function writeRecoveryBundle(client: S3Client, bucket: string, where: { prefix: string; namespace: string; target: string; restoreId: string }, content: BundleContent): Promise<string> {
  const root = where.prefix.replace(/^\/+|\/+$/g, '');
  const key = `${root ? `${root}/` : ''}${where.namespace}/${where.target}/restores/${where.restoreId}/README.md`;
  const unpack = (o: { compression?: string }) => (o.compression === 'none' ? 'cat' : 'zstd -d');
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
  );
  await putObjectUnique(client, bucket, key, Buffer.from(lines.join('\n'), 'utf8'), { disableConditionalPut: true, contentType: 'text/markdown; charset=utf-8' });
  return await presignGet(client, bucket, key, content.ttlSeconds);
}
