import type { StrataReports } from '@sigil/proto/strata-jobs';
import type { components } from '@sigil/proto/api/strata';
import { Prisma } from '../generated/prisma/client.ts';
import type { BackupTargetSpec as TargetSpec, TargetPitrStatus } from '@sigil/proto/resources';
import type { ChainReport, ChainSegment } from './chain.ts';
import { computeChain, parseLsn } from './chain-inputs.ts';
import { segmentsOverlapping, type TimeRange } from './segment-times.ts';
import type { BackupDeps } from '../backups/backups.ts';
import { bumpCatalogVersion, type Db, type Tx } from '../db.ts';
import type { ResourceRepository, StoredResource } from '../resources/resources.ts';

type TableChange = components['schemas']['TableChange'];

export type SegmentRecord = NonNullable<Awaited<ReturnType<Db['segment']['findUnique']>>>;

/** Records an uploaded segment (once per key); a complete segment replaces the partial uploads of the same file. */
export async function recordSegment(deps: BackupDeps, tx: Tx, data: StrataReports['segment.uploaded']): Promise<void> {
  const s = data.segment;
  const row = {
    namespace: data.namespace,
    targetName: data.name,
    chainId: s.chainID,
    timeline: s.timeline,
    name: s.name,
    startPos: s.startPos,
    endPos: s.endPos,
    startLsn: parseLsn(s.startPos),
    endLsn: parseLsn(s.endPos),
    firstTime: s.firstTime ? new Date(s.firstTime) : null,
    lastTime: s.lastTime ? new Date(s.lastTime) : null,
    coveredUntil: s.coveredUntil ? new Date(s.coveredUntil) : null,
    commits: s.commits,
    sha256: s.sha256,
    size: BigInt(s.size),
    rawSize: BigInt(s.rawSize),
    partial: s.partial,
    compression: s.compression,
    uploadedAt: new Date(s.uploadedAt),
    missing: false,
    ...summaryColumns(s),
    previewsKey: s.previewsKey ?? null,
    previewsSha256: s.previewsSha256 ?? null,
    previewRows: s.previewRows ?? null,
    previewsError: s.previewsError ?? null,
  };
  // The target's row first, as every writer of its backups and status takes it (`backup-now` locks it, then inserts a
  // backup, whose trigger renews the chain inputs): taking the chain inputs first here deadlocked with it.
  await deps.resources.lock(tx, 'BackupTarget', data.namespace, data.name);
  // The same upload reported again (a redelivery, or a streamer that read the file again after a takeover): known already.
  const known = await tx.segment.findUnique({ where: { key: s.key }, select: { sha256: true, uploadedAt: true, missing: true } });
  if (known && !known.missing && known.sha256 === s.sha256 && known.uploadedAt.getTime() === row.uploadedAt.getTime()) return;
  // A partial upload's report redelivered after its file's complete one: that object is already replaced and gone.
  const superseded = s.partial && (await tx.segment.count({ where: { namespace: data.namespace, targetName: data.name, chainId: s.chainID, timeline: s.timeline, name: s.name, partial: false, missing: false } })) > 0;
  if (superseded) return;
  await tx.segment.upsert({ where: { key: s.key }, create: { key: s.key, ...row }, update: row });
  if (!s.partial) await tx.segment.deleteMany({ where: { namespace: data.namespace, targetName: data.name, timeline: s.timeline, name: s.name, partial: true } });
  const target = await deps.resources.get<TargetSpec>(tx, 'BackupTarget', data.namespace, data.name);
  if (!target) return;
  const report = await refreshChain(tx, deps.resources, target, { lastSegment: s.name });
  const version = await bumpCatalogVersion(tx);
  const window = report.windows.at(-1);
  deps.notify({
    kind: 'target',
    namespace: data.namespace,
    name: data.name,
    phase: report.chainBroken ? 'ChainBroken' : 'Ready',
    stage: 'segment',
    message: `segment ${s.name}${s.partial ? ' (partial)' : ''} uploaded${window ? `; window ${window.from} – ${window.to}` : ''}`,
    bytes: s.size,
    version: Number(version),
  });
}

/** The summary the mover made of a segment, as stored with it (none, with the reason, when the mover could not make one). */
function summaryColumns(s: StrataReports['segment.uploaded']['segment']) {
  if (!s.summary) return { tables: Prisma.DbNull, ddl: [], schemaChanges: null, explanation: null, summaryError: s.summaryError ?? 'the mover did not summarise this segment' };
  const tables = Object.fromEntries(Object.entries(s.summary.tables).map(([table, c]) => [table, { inserts: c.inserts, updates: c.updates, deletes: c.deletes, truncates: c.truncates }]));
  return { tables, ddl: s.summary.ddl, schemaChanges: s.summary.schemaChanges ?? null, explanation: s.summary.explanation, summaryError: null };
}

/** Changes `status.pitr` under the resource's row lock: the streamer, the chain and the supervisor all write it. */
export async function updatePitr(tx: Tx, resources: ResourceRepository, namespace: string, name: string, change: (pitr: TargetPitrStatus) => TargetPitrStatus): Promise<void> {
  await resources.updateStatus(tx, 'BackupTarget', namespace, name, (current) => ({ ...current.status, pitr: change(((current.status as { pitr?: TargetPitrStatus }).pitr ?? {}) as TargetPitrStatus) }));
}

/** Recomputes the chain and writes what the target's status says about it. */
export async function refreshChain(tx: Tx, resources: ResourceRepository, target: StoredResource<TargetSpec>, extra: Partial<TargetPitrStatus> = {}): Promise<ChainReport<ChainSegment>> {
  const report = await computeChain(tx, target);
  await updatePitr(tx, resources, target.metadata.namespace, target.metadata.name, (pitr) => {
    const { brokenReason: _r, brokenSince: _s, ...rest } = pitr;
    return { ...rest, ...pitrFields(report), ...extra };
  });
  return report;
}

/** The status members derived from the chain. */
export function pitrFields(report: ChainReport<ChainSegment>): Partial<TargetPitrStatus> {
  const window = report.windows.at(-1);
  return {
    chainBroken: report.chainBroken,
    ...(report.brokenReason ? { brokenReason: report.brokenReason } : {}),
    ...(report.brokenSince ? { brokenSince: report.brokenSince.toISOString() } : {}),
    ...(report.windows[0] ? { windowStart: report.windows[0].from } : {}),
    ...(window ? { windowEnd: window.to } : {}),
    segments: report.segments,
    gaps: report.gaps,
  };
}

/** Spec 2.1 Segment. */
export function segmentView(row: SegmentRecord) {
  return {
    seq: Number(row.seq),
    target: `${row.namespace}/${row.targetName}`,
    engine: row.startPos.includes(':') ? 'mysql' : 'postgres',
    chainID: row.chainId,
    timeline: row.timeline,
    name: row.name,
    key: row.key,
    startPos: row.startPos,
    endPos: row.endPos,
    ...(row.firstTime ? { firstTime: row.firstTime.toISOString() } : {}),
    ...(row.lastTime ? { lastTime: row.lastTime.toISOString() } : {}),
    commits: row.commits,
    sha256: row.sha256,
    size: Number(row.size),
    rawSize: Number(row.rawSize),
    partial: row.partial,
    uploadedAt: row.uploadedAt.toISOString(),
    server: row.chainId.split('-')[0] ?? '',
    version: 1,
    tables: (row.tables ?? {}) as Record<string, TableChange>,
    ddl: row.ddl,
    ...(row.schemaChanges !== null ? { schemaChanges: row.schemaChanges } : {}),
    ...(row.summaryError ? { summaryError: row.summaryError } : {}),
    ...(row.previewsKey ? { previewsKey: row.previewsKey } : {}),
    ...(row.previewRows !== null ? { previewRows: row.previewRows } : {}),
    ...(row.previewsError ? { previewsError: row.previewsError } : {}),
    ...explanationOf(row),
  };
}

function explanationOf(row: SegmentRecord): { explanation?: string } {
  const parts = [row.missing ? 'the object is missing from the store' : undefined, row.explanation ?? (row.summaryError ? 'no change summary' : undefined)].filter(Boolean);
  return parts.length ? { explanation: parts.join('; ') } : {};
}

/**
 * Segments uploaded since a time, oldest first, of one target or of the targets `visible` lets through; with
 * `overlapping`, only those whose time overlaps that range (the timeline's zoom).
 */
export async function listSegments(db: Db, options: { since?: Date; target?: { namespace: string; name: string }; visible?: (namespace: string, name: string) => boolean; limit?: number; overlapping?: TimeRange }) {
  const limit = options.limit ?? 1000;
  const inRange = options.overlapping && options.target ? await segmentsOverlapping(db, options.target, options.overlapping, limit) : undefined;
  const rows = await db.segment.findMany({
    where: {
      expired: false,
      ...(options.since ? { uploadedAt: { gte: options.since } } : {}),
      ...(options.target ? { namespace: options.target.namespace, targetName: options.target.name } : {}),
      ...(inRange ? { seq: { in: inRange } } : {}),
    },
    orderBy: [{ uploadedAt: 'asc' }, { seq: 'asc' }],
    take: limit,
  });
  return rows.filter((r) => !options.visible || options.visible(r.namespace, r.targetName)).map(segmentView);
}
