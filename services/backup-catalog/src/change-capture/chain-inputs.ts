/**
 * The inputs of a target's change-capture chain (its fulls, its segments, the streamer's coverage) as the catalog
 * loads them, the chain computed from them, and the summary the console reads: remembered per target under the
 * token of its inputs (`chain_inputs`, renewed by triggers on every write to its segments and backups) and the
 * coverage it was computed with, so a target with tens of thousands of segments costs one look-up per read until
 * something changes.
 */
import { chainIdOf } from '@sigil/proto/strata-jobs';
import type { BackupTargetSpec as TargetSpec, TargetPitrStatus } from '@sigil/proto/resources';
import { analyzeChain, type ChainReport, type ChainSegment, type FullBase, type SegmentRow, type StreamCoverage, type Window } from './chain.ts';
import type { DbOrTx } from '../db.ts';
import type { StoredResource } from '../resources/resources.ts';

/** A position as a number that orders: a Postgres LSN (`X/Y`), or a binlog `<file>.<n>:<offset>` as n·2³² + offset. */
export function parseLsn(position: string): bigint {
  const binlog = /\.(\d+):(\d+)$/.exec(position);
  if (binlog) return (BigInt(binlog[1]!) << 32n) + BigInt(binlog[2]!);
  const [high = '0', low = '0'] = position.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** A Postgres LSN as Postgres writes it (`X/Y`, upper-case hex). */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** What the chain reads of a succeeded backup: the manifest's members it needs, picked out by the database. */
interface FullRow {
  id: string;
  engine: string;
  stored_bytes: bigint;
  completed_at: Date | null;
  queued_at: Date;
  mode: string | null;
  consistent_at: string | null;
  system_id: string | null;
  end_lsn: string | null;
  timeline: string | null;
  binlog_file: string | null;
  binlog_pos: string | null;
}

const FULL_ROWS = `SELECT id, engine, stored_bytes, completed_at, queued_at, manifest->>'mode' AS mode, manifest->>'consistentAt' AS consistent_at,
  manifest#>>'{server,systemID}' AS system_id, manifest#>>'{position,endLSN}' AS end_lsn, manifest#>>'{position,timeline}' AS timeline,
  manifest#>>'{position,binlogFile}' AS binlog_file, manifest#>>'{position,binlogPos}' AS binlog_pos
FROM backups WHERE namespace = $1 AND target_name = $2 AND phase = 'Succeeded' ORDER BY completed_at ASC`;

/**
 * The fulls of a target that a chain can start from: Postgres physical ones (consistent at their end LSN), and
 * MariaDB/MySQL dumps that recorded their binlog position (restorable from their completion on, conservatively).
 */
export async function physicalFulls(conn: DbOrTx, namespace: string, targetName: string): Promise<FullBase[]> {
  const rows = await conn.$queryRawUnsafe<FullRow[]>(FULL_ROWS, namespace, targetName);
  const fulls: FullBase[] = [];
  for (const row of rows) {
    const timeline = row.timeline === null ? 1 : Number(row.timeline);
    const base = { id: row.id, timeline, storedBytes: Number(row.stored_bytes) };
    if (row.mode === 'physical' && row.end_lsn) {
      const chainId = row.system_id ? chainIdOf(row.system_id, timeline) : undefined;
      fulls.push({ ...base, time: new Date(row.consistent_at ?? row.completed_at ?? row.queued_at), endLsn: parseLsn(row.end_lsn), ...(chainId ? { chainId } : {}) });
    } else if (row.engine === 'mysql' && row.binlog_file && row.binlog_pos !== null) {
      fulls.push({ ...base, timeline: 1, time: row.completed_at ?? row.queued_at, endLsn: parseLsn(`${row.binlog_file}:${row.binlog_pos}`), needsChangeLog: true, wholeSeconds: true });
    }
  }
  return fulls;
}

/** What the streamer last reported in the target's status. */
function coverageOf(target: StoredResource<TargetSpec>): StreamCoverage {
  const pitr = ((target.status as { pitr?: TargetPitrStatus }).pitr ?? {}) as TargetPitrStatus;
  return {
    ...(pitr.coveredUntil ? { coveredUntil: new Date(pitr.coveredUntil) } : {}),
    ...(pitr.coveredPos ? { coveredLsn: parseLsn(pitr.coveredPos) } : {}),
    ...(pitr.coveredTimeline ? { coveredTimeline: pitr.coveredTimeline } : {}),
    ...(pitr.brokenReason && pitr.brokenAt ? { brokenReason: pitr.brokenReason, brokenAt: new Date(pitr.brokenAt) } : {}),
  };
}

/** A segment row as the chain and retention read it: no checksum, size or compression (see `segmentObjects`). */
export type LoadedSegment = ChainSegment & { seq: bigint; key: string };

/** The times as whole milliseconds (what a Date holds of their microseconds), empty when null. */
const MS_OF_TIMES = ['first_time', 'last_time', 'covered_until', 'uploaded_at'].map((column) => `coalesce(floor(extract(epoch FROM ${column}) * 1000)::bigint::text, '')`).join(', ');
const ms = (text: string) => (text === '' ? null : Number(text));

/**
 * A target's segment rows (not expired; missing ones only when asked), oldest position first. A target may hold
 * tens of thousands: the database sends them as one text, a line per row, and only what the chain reads becomes an
 * object (Prisma's rows of them outgrow a service's heap). Times stay numbers, and the strings kept are decoded anew
 * from the text's bytes: a substring of it would keep the whole text alive as long as the row.
 */
export async function loadSegments(conn: DbOrTx, namespace: string, targetName: string, options: { missing: boolean }): Promise<LoadedSegment[]> {
  const [{ rows } = { rows: null }] = await conn.$queryRawUnsafe<Array<{ rows: string | null }>>(
    `SELECT string_agg(concat_ws(E'\t', seq, key, chain_id, timeline, name, start_lsn, end_lsn, ${MS_OF_TIMES}, partial::int, missing::int), E'\n' ORDER BY start_lsn, seq) AS rows
     FROM segments WHERE namespace = $1 AND target_name = $2 AND NOT expired${options.missing ? '' : ' AND NOT missing'}`,
    namespace, targetName,
  );
  if (!rows) return [];
  const own = ownStrings();
  return rows.split('\n').map((line) => {
    const [seq = '', key = '', chainId = '', timeline = '', name = '', startLsn = '', endLsn = '', first = '', last = '', covered = '', uploaded = '', partial = '', missing = ''] = line.split('\t');
    const uploadedMs = ms(uploaded);
    return {
      seq: BigInt(seq), key: own.copy(key), chainId: own.shared(chainId), timeline: Number(timeline), name: own.copy(name), startLsn: BigInt(startLsn), endLsn: BigInt(endLsn),
      firstMs: ms(first), lastMs: ms(last), coveredUntilMs: ms(covered), ...(uploadedMs === null ? {} : { uploadedMs }), partial: partial === '1', missing: missing === '1',
    };
  });
}

/** Strings that do not hold on to the text they were cut from: copies, and one string per distinct value for those repeated on every row. */
function ownStrings() {
  const seen = new Map<string, string>();
  const copy = (text: string) => Buffer.from(text, 'utf8').toString('utf8');
  return {
    copy,
    shared(text: string): string {
      let kept = seen.get(text);
      if (kept === undefined) seen.set(text, (kept = copy(text)));
      return kept;
    },
  };
}

/** The segments with their objects in the store (checksum, size, compression), in the order given: a restore's. */
export async function segmentObjects(conn: DbOrTx, segments: LoadedSegment[]): Promise<SegmentRow[]> {
  if (segments.length === 0) return [];
  const objects = await conn.$queryRawUnsafe<Array<{ seq: bigint; sha256: string; size: bigint; compression: string; endPos: string }>>(
    'SELECT seq, sha256, size, compression, end_pos AS "endPos" FROM segments WHERE seq = ANY($1::bigint[])',
    segments.map((s) => s.seq.toString()),
  );
  const bySeq = new Map(objects.map((o) => [o.seq, o]));
  return segments.map((segment) => {
    const object = bySeq.get(segment.seq);
    if (!object) throw new Error(`segment ${segment.key} left the catalog while its restore was planned`);
    return { ...segment, sha256: object.sha256, size: object.size, compression: object.compression, endPos: object.endPos };
  });
}

export async function chainReport(conn: DbOrTx, target: StoredResource<TargetSpec>): Promise<ChainReport<LoadedSegment>> {
  const { namespace, name } = target.metadata;
  // Expired segments wait for garbage collection: no kept full's window needs them, so no chain may use them. A
  // missing one is in no chain either (`bestSegments` skips it): neither is loaded.
  const rows = await loadSegments(conn, namespace, name, { missing: false });
  return analyzeChain(await physicalFulls(conn, namespace, name), rows, coverageOf(target));
}

/** A hole of the change log as the console shows it: between which segments, and from when to when. */
export interface HoleSummary {
  after: string;
  before: string;
  /** The segment before the hole is only a partial upload of its file. */
  partial: boolean;
  /** The last moment the segment before the hole holds, and the first the one after it holds (when they hold any). */
  from: Date | null;
  to: Date | null;
}

/** What the console shows of a chain: no segment rows, so a summary is small enough to keep. */
export interface ChainSummary {
  windows: Window[];
  gaps: number;
  holes: HoleSummary[];
  chainBroken: boolean;
  brokenReason?: string;
  brokenSince?: Date;
  segments: number;
}

const dateOf = (ms: number | null | undefined): Date | null => (ms === null || ms === undefined ? null : new Date(ms));
const reachOf = (s: ChainSegment) => dateOf(s.coveredUntilMs ?? s.lastMs ?? s.firstMs ?? s.uploadedMs);
const startOf = (s: ChainSegment) => dateOf(s.firstMs ?? s.lastMs ?? s.coveredUntilMs ?? s.uploadedMs);

export function summarize(report: ChainReport<ChainSegment>): ChainSummary {
  const { windows, gaps, chainBroken, brokenReason, brokenSince, segments } = report;
  const holes = report.holes.map(({ after, before }) => ({ after: after.name, before: before.name, partial: after.partial, from: reachOf(after), to: startOf(before) }));
  return { windows, gaps, holes, chainBroken, segments, ...(brokenReason ? { brokenReason } : {}), ...(brokenSince ? { brokenSince } : {}) };
}

/** The most targets whose summary is kept; the least recently read goes first. */
const REMEMBERED_TARGETS = 512;
const remembered = new Map<string, { key: string; summary: ChainSummary }>();

/** The token of the target's inputs and the coverage: undefined before anything was ever written for it. */
async function inputsKey(conn: DbOrTx, target: StoredResource<TargetSpec>): Promise<string | undefined> {
  const token = await inputsToken(conn, target.metadata.namespace, target.metadata.name);
  if (token === undefined) return undefined;
  return `${token} ${JSON.stringify(coverageOf(target), (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))}`;
}

/** The token of a target's inputs (its segments and backups), renewed by every write to them; undefined before any. */
export async function inputsToken(conn: DbOrTx, namespace: string, targetName: string): Promise<string | undefined> {
  const inputs = await conn.chainInputs.findUnique({ where: { namespace_targetName: { namespace, targetName } }, select: { token: true } });
  return inputs?.token;
}

function remember(id: string, key: string, summary: ChainSummary): void {
  remembered.delete(id);
  remembered.set(id, { key, summary });
  if (remembered.size > REMEMBERED_TARGETS) remembered.delete(remembered.keys().next().value as string);
}

/**
 * The chain computed now, its summary remembered. The token is read before the rows: rows newer than the token are
 * harmless (the next write renews it), rows older than it would be kept as if current.
 */
export async function computeChain(conn: DbOrTx, target: StoredResource<TargetSpec>): Promise<ChainReport<LoadedSegment>> {
  const key = await inputsKey(conn, target);
  const report = await chainReport(conn, target);
  if (key) remember(`${target.metadata.namespace}/${target.metadata.name}`, key, summarize(report));
  return report;
}

/** The target's chain summary: remembered while its inputs and coverage are unchanged, computed otherwise. */
export async function chainSummary(conn: DbOrTx, target: StoredResource<TargetSpec>): Promise<ChainSummary> {
  const id = `${target.metadata.namespace}/${target.metadata.name}`;
  const key = await inputsKey(conn, target);
  const known = remembered.get(id);
  if (key && known?.key === key) {
    remember(id, key, known.summary);
    return known.summary;
  }
  // Readers arriving while it is computed wait for that computation: two at once would hold two chains in the heap.
  const pending = key ? computing.get(`${id} ${key}`) : undefined;
  if (pending) return await pending;
  const computation = chainReport(conn, target).then(summarize);
  if (!key) return await computation;
  computing.set(`${id} ${key}`, computation);
  try {
    const summary = await computation;
    remember(id, key, summary);
    return summary;
  } finally {
    computing.delete(`${id} ${key}`);
  }
}

/** The summaries being computed for readers, by target and inputs key. */
const computing = new Map<string, Promise<ChainSummary>>();
