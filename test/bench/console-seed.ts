// Seeds the console bench's target with a long history, fast: copies of the real backup's row and of a real change-log
// segment's row, inserted straight into the backup-catalog's database (the rows the services wrote, with new ids,
// times and positions; every other column copied, the column lists read from the tables), then ANALYZE.
//
// Where the history lies: before the real backup, on an earlier server (another system identifier, as a database
// re-created from scratch would have). The stack's Postgres is minutes old: its WAL positions start near 0/1000000, so
// 70 days of WAL before the real backup cannot be on its own line. On a line of its own the history is contiguous
// (one WAL file after the other, 2 minutes each), every copied backup's chain runs to its end, and the windows are
// real windows: the catalog computes them, with the hour between that line's end and the real backup as a gap.
//
// Every seeded segment also gets an (empty) object at its key in the store: the catalog's mirror pass marks segment
// rows whose object is missing every 5 minutes, which would break the seeded chain halfway through the bench.
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { chainIdOf } from '@sigil/proto/strata-jobs';
import type { Stack } from '@sigil/local-stack';
import { createS3Client } from '@strata/stream';
import type { BenchS3 } from './console-s3.ts';
import { BUCKET, type Target } from './console-target.ts';

const SEGMENT_MS = 120_000;
/** Between the history's last segment and the real backup: the earlier server's end, a gap on the timeline. */
const GAP_BEFORE_REAL_MS = 3600_000;
const SEGMENT_ROWS_PER_INSERT = 5_000;
const BACKUP_ROWS_PER_INSERT = 500;
const PUT_CLIENTS = 32;

export interface Seeded {
  backups: number;
  segments: number;
  historyFrom: Date;
  historyTo: Date;
  objectSeconds: number;
  copySeconds: number;
}

export function catalogDatabaseUrl(stack: Stack, namespace: string): string {
  const url = new URL(stack.infra.postgres.adminUrl);
  url.pathname = `/${namespace}strata_backup_catalog`;
  return url.toString();
}

/** `backups` copies of the real backup and `segments` segments before it, spread over segments × 2 minutes. */
export async function seedHistory(stack: Stack, namespace: string, s3: BenchS3, target: Target, counts: { backups: number; segments: number }): Promise<Seeded> {
  const client = new pg.Client({ connectionString: catalogDatabaseUrl(stack, namespace) });
  await client.connect();
  try {
    const real = await realBackup(client, target);
    const source = await realSegment(client, target, real);
    const historyTo = new Date(Date.parse(real.manifest.consistentAt) - GAP_BEFORE_REAL_MS);
    const historyFrom = new Date(historyTo.getTime() - counts.segments * SEGMENT_MS);
    const line = lineOf(real, source, historyFrom);
    const segments = planSegments(line, source, counts.segments);
    let started = performance.now();
    await putPlaceholders(s3, segments.map((s) => s.key));
    const objectSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    // One transaction: the retention pass must never see the line without its fulls (it would retire the line, and
    // the next garbage collection delete it).
    await client.query('BEGIN');
    await insertSegments(client, source.seq, segments);
    await insertBackups(client, real, planBackups(real, line, counts.backups));
    await client.query('COMMIT');
    // What autovacuum would have done by the time a target has this history: the planner's statistics.
    await client.query('ANALYZE backups');
    await client.query('ANALYZE segments');
    return { backups: counts.backups, segments: counts.segments, historyFrom, historyTo, objectSeconds, copySeconds: (performance.now() - started) / 1000 };
  } finally {
    await client.end();
  }
}

interface RealBackup {
  id: string;
  name: string;
  manifest_key: string;
  queued_at: Date;
  manifest: { consistentAt: string; startedAt?: string; completedAt?: string; server: { systemID: string }; position: { startLSN: string; endLSN: string; startWAL?: string; timeline: number } };
}

interface SourceSegment {
  seq: string;
  key: string;
  chain_id: string;
  name: string;
  timeline: number;
  raw_size: string;
}

async function realBackup(client: pg.Client, target: Target): Promise<RealBackup> {
  const rows = (await client.query<RealBackup>("SELECT id, name, manifest_key, queued_at, manifest FROM backups WHERE namespace = $1 AND target_name = $2 AND phase = 'Succeeded'", [target.namespace, target.name])).rows;
  const real = rows[0];
  if (rows.length !== 1 || !real) throw new Error(`expected the one real backup of ${target.namespace}/${target.name}, found ${rows.length}`);
  if (!real.manifest.position?.endLSN || !real.manifest.server?.systemID) throw new Error('the real backup is not a physical one (no end position): the seeded history would have no windows');
  return real;
}

/**
 * The real segment that holds the real backup's end position, once complete: the one its chain starts with, which
 * retention keeps as long as the backup (an older one may expire while the copies are made, and they would copy
 * `expired`). Waits for it up to 2 minutes (the streamer completes it at the next WAL switch).
 */
async function realSegment(client: pg.Client, target: Target, real: RealBackup): Promise<SourceSegment> {
  const end = parseLsnText(real.manifest.position.endLSN).toString();
  const deadline = Date.now() + 120_000;
  for (;;) {
    const row = (
      await client.query<SourceSegment>(
        'SELECT seq::text, key, chain_id, name, timeline, raw_size::text FROM segments WHERE namespace = $1 AND target_name = $2 AND NOT partial AND NOT expired AND NOT missing AND start_lsn <= $3 AND end_lsn > $3',
        [target.namespace, target.name, end],
      )
    ).rows[0];
    if (row) return row;
    if (Date.now() > deadline) throw new Error("no complete change-log segment holds the real backup's end after 2 minutes: is change capture streaming?");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** The earlier server's line: its system identifier (initdb's form: seconds << 32 | the rest), chain and file size. */
interface Line {
  system: string;
  chainId: string;
  timeline: number;
  fileBytes: bigint;
  from: number;
}

function lineOf(real: RealBackup, source: SourceSegment, historyFrom: Date): Line {
  const initdbSeconds = BigInt(Math.floor(historyFrom.getTime() / 1000) - 86_400);
  const system = ((initdbSeconds << 32n) | (BigInt(real.manifest.server.systemID) & 0xffffffffn)).toString();
  return { system, chainId: chainIdOf(system, source.timeline), timeline: source.timeline, fileBytes: BigInt(source.raw_size), from: historyFrom.getTime() };
}

const hex8 = (value: bigint) => value.toString(16).toUpperCase().padStart(8, '0');
const position = (lsn: bigint) => `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
/** Postgres' WAL file name of a position: timeline, log and segment, 8 hex digits each. */
const walName = (line: Line, lsn: bigint) => `${hex8(BigInt(line.timeline))}${hex8(lsn >> 32n)}${hex8((lsn & 0xffffffffn) / line.fileBytes)}`;
/** File i of the line starts at (i + 1) × its size: the first file of a new cluster is ...0001. */
const fileStart = (line: Line, i: number) => BigInt(i + 1) * line.fileBytes;

/** A deterministic generator (mulberry32): the same history in every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface SegmentPlan {
  key: string;
  name: string;
  startPos: string;
  endPos: string;
  startLsn: string;
  endLsn: string;
  firstTime: string;
  lastTime: string;
  uploadedAt: string;
  commits: number;
  sha256: string;
  size: string;
}

/**
 * One WAL file every 2 minutes: the first commit a moment after it starts, the last one a moment before the next
 * file's first, covered up to its last commit, uploaded seconds later; 400 to 2,800 commits and 1.2 to 5.7 MB
 * compressed (a 16 MiB file of a busy OLTP database), more by day than by night.
 */
function planSegments(line: Line, source: SourceSegment, count: number): SegmentPlan[] {
  const next = random(0x5e9);
  return Array.from({ length: count }, (_, i) => {
    const start = fileStart(line, i);
    const begins = line.from + i * SEGMENT_MS;
    const hour = new Date(begins).getUTCHours();
    const busy = hour >= 7 && hour < 20 ? 1 : 0.45;
    const name = walName(line, start);
    const key = source.key.replace(source.chain_id, line.chainId).replace(source.name, name);
    return {
      key,
      name,
      startPos: position(start),
      endPos: position(start + line.fileBytes),
      startLsn: start.toString(),
      endLsn: (start + line.fileBytes).toString(),
      firstTime: new Date(begins + 200 + next() * 2_800).toISOString(),
      lastTime: new Date(begins + SEGMENT_MS - 100 - next() * 1_900).toISOString(),
      uploadedAt: new Date(begins + SEGMENT_MS + 2_000 + next() * 6_000).toISOString(),
      commits: Math.round((400 + next() * 2_400) * busy),
      sha256: createHash('sha256').update(key).digest('hex'),
      size: String(Math.round((1_200_000 + next() * 4_500_000) * busy)),
    };
  });
}

/** Empty objects at the seeded keys (see the header), PUT through S3 like any upload. */
async function putPlaceholders(s3: BenchS3, keys: string[]): Promise<void> {
  const client = createS3Client({ endpoint: s3.endpoint, region: s3.region, pathStyle: true, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey });
  let next = 0;
  const empty = Buffer.alloc(0);
  await Promise.all(
    Array.from({ length: PUT_CLIENTS }, async () => {
      while (next < keys.length) await client.putObject(BUCKET, keys[next++] as string, empty, 0);
    }),
  );
}

async function columnsOf(client: pg.Client, table: string): Promise<Array<{ name: string; type: string }>> {
  const result = await client.query<{ name: string; type: string }>("SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position", [table]);
  return result.rows;
}

const quoted = (column: string) => `"${column.replace(/"/g, '""')}"`;

const SEGMENT_VALUES: Record<string, string> = {
  key: 'n.key', chain_id: 'n.chain_id', name: 'n.name', start_pos: 'n.start_pos', end_pos: 'n.end_pos', start_lsn: 'n.start_lsn', end_lsn: 'n.end_lsn',
  first_time: 'n.first_time', last_time: 'n.last_time', covered_until: 'n.last_time', uploaded_at: 'n.uploaded_at', commits: 'n.commits', sha256: 'n.sha256', size: 'n.size',
};

/** The planned segments, each a copy of the source row with the planned columns (seq: the table's own sequence). */
async function insertSegments(client: pg.Client, sourceSeq: string, plans: SegmentPlan[]): Promise<void> {
  const columns = (await columnsOf(client, 'segments')).map((c) => c.name).filter((name) => name !== 'seq');
  const values = columns.map((column) => SEGMENT_VALUES[column] ?? `s.${quoted(column)}`);
  const sql = `INSERT INTO segments (${columns.map(quoted).join(', ')})
    SELECT ${values.join(', ')} FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int8[], $7::int8[], $8::timestamptz[], $9::timestamptz[], $10::timestamptz[], $11::int[], $12::text[], $13::int8[])
      AS n(key, chain_id, name, start_pos, end_pos, start_lsn, end_lsn, first_time, last_time, uploaded_at, commits, sha256, size)
    CROSS JOIN (SELECT * FROM segments WHERE seq = $14) s`;
  const chainId = plans[0] ? chainOfKey(plans[0].key) : '';
  for (let from = 0; from < plans.length; from += SEGMENT_ROWS_PER_INSERT) {
    const batch = plans.slice(from, from + SEGMENT_ROWS_PER_INSERT);
    const column = <K extends keyof SegmentPlan>(key: K) => batch.map((plan) => plan[key]);
    await client.query(sql, [
      column('key'), batch.map(() => chainId), column('name'), column('startPos'), column('endPos'), column('startLsn'), column('endLsn'),
      column('firstTime'), column('lastTime'), column('uploadedAt'), column('commits'), column('sha256'), column('size'), sourceSeq,
    ]);
  }
}

/** The chain folder of a segment key (`.../wal/<chain>/<file>`). */
const chainOfKey = (key: string) => key.split('/').at(-2) as string;

interface BackupPlan {
  id: string;
  name: string;
  manifestKey: string;
  manifest: string;
  shiftMs: number;
}

const idStamp = (at: Date) => at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'z').toLowerCase();

/**
 * `count` copies spread evenly over the line, the first in its first file: each consistent at its moment, its end
 * position in the file of that moment (at the real backup's offsets in its file), every time of the row and the
 * manifest moved by the same amount, its id made as the catalog makes one (queue time + 8 random hex digits).
 */
function planBackups(real: RealBackup, line: Line, count: number): BackupPlan[] {
  const realAt = Date.parse(real.manifest.consistentAt);
  // From the middle of the line's first file to the middle of its last one.
  const lineEnd = realAt - GAP_BEFORE_REAL_MS;
  const step = count > 1 ? (lineEnd - line.from - SEGMENT_MS) / (count - 1) : 0;
  const realEnd = parseLsnText(real.manifest.position.endLSN);
  const endOffset = realEnd % line.fileBytes;
  const length = realEnd - parseLsnText(real.manifest.position.startLSN);
  const text = JSON.stringify(real.manifest);
  return Array.from({ length: count }, (_, j) => {
    const at = line.from + SEGMENT_MS / 2 + j * step;
    const shiftMs = at - realAt;
    const id = `${idStamp(new Date(real.queued_at.getTime() + shiftMs))}-${randomBytes(4).toString('hex')}`;
    const end = fileStart(line, Math.floor((at - line.from) / SEGMENT_MS)) + endOffset;
    const manifest = JSON.parse(text.replaceAll(real.id, id)) as RealBackup['manifest'];
    manifest.consistentAt = new Date(at).toISOString();
    if (manifest.startedAt) manifest.startedAt = new Date(Date.parse(manifest.startedAt) + shiftMs).toISOString();
    if (manifest.completedAt) manifest.completedAt = new Date(Date.parse(manifest.completedAt) + shiftMs).toISOString();
    manifest.server.systemID = line.system;
    const { position: was } = manifest;
    manifest.position = { ...was, startLSN: position(end - length), endLSN: position(end), ...(was.startWAL ? { startWAL: walName(line, end - length) } : {}) };
    return { id, name: real.name.replaceAll(real.id, id), manifestKey: real.manifest_key.replaceAll(real.id, id), manifest: JSON.stringify(manifest), shiftMs };
  });
}

/** A position (`X/Y`) as a number. */
const parseLsnText = (text: string) => {
  const [high = '0', low = '0'] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
};

/** The planned copies: every column the real row's, but the planned ones and its times moved (timestamptz columns). */
async function insertBackups(client: pg.Client, real: RealBackup, plans: BackupPlan[]): Promise<void> {
  const columns = await columnsOf(client, 'backups');
  const replaced: Record<string, string> = {
    id: 'n.id',
    name: 'n.name',
    manifest_key: 'n.manifest_key',
    manifest: 'n.manifest',
    // What the retention pass writes for every backup but the newest under a policy without rules: nothing holds it.
    retained_by: "'{}'::text[]",
  };
  const values = columns.map(({ name, type }) => replaced[name] ?? (type === 'timestamp with time zone' ? `b.${quoted(name)} + n.shift_ms * interval '1 millisecond'` : `b.${quoted(name)}`));
  const sql = `INSERT INTO backups (${columns.map((c) => quoted(c.name)).join(', ')})
    SELECT ${values.join(', ')} FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::float8[]) AS n(id, name, manifest_key, manifest, shift_ms)
    CROSS JOIN (SELECT * FROM backups WHERE id = $6) b`;
  for (let from = 0; from < plans.length; from += BACKUP_ROWS_PER_INSERT) {
    const batch = plans.slice(from, from + BACKUP_ROWS_PER_INSERT);
    await client.query(sql, [batch.map((p) => p.id), batch.map((p) => p.name), batch.map((p) => p.manifestKey), batch.map((p) => p.manifest), batch.map((p) => p.shiftMs), real.id]);
  }
}
