import { startIdempotentConsumer, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import { type Logger } from '@sigil/kit/log';
import { STRATA_EVENTS_STREAM, STRATA_REPORT_TYPES, strataEventSubject, strataProgressWildcard, type StrataReport, type StrataReports } from '@sigil/proto/strata-jobs';
import { assertProgressReport, decodeStrataReport } from '@sigil/proto/strata-wire';
import { BACKUP_PHASES, backupEvent, type BackupDeps } from './backups.ts';
import { recordBackupOutcome } from '../resources/conditions.ts';
import { bumpCatalogVersion, catalogVersion, type Tx } from '../db.ts';
import { restoreEvent } from '../restores/restore-steps.ts';
import { recordSegment, refreshChain } from '../change-capture/segments.ts';
import { recordVerification } from '../restores/verification.ts';
import { createInPlaceRestores, wayBack } from '../restores/in-place.ts';
import type { StreamSupervisor } from '../change-capture/streams.ts';
import type { BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import { backupRefView } from '../console/views.ts';
import { afterPostponedStart, applyPostponed } from './load-guard.ts';

/** Applies the mover's reports to Backup and Restore records; a freed slot lets the dispatcher start the next run. */
export async function startReportConsumer(deps: BackupDeps, bus: Bus, log: Logger, prefix: string, afterChange: () => void, streams?: StreamSupervisor): Promise<RunningConsumer> {
  return startIdempotentConsumer<StrataReport, Tx>({
    bus,
    // A report that does not match its schema (proto/jobs) is terminated and logged by the consumer.
    decode: decodeStrataReport,
    stream: STRATA_EVENTS_STREAM,
    durable: `${prefix}backup-catalog-reports`,
    filterSubjects: STRATA_REPORT_TYPES.map((type) => strataEventSubject(type, deps.cell)),
    db: deps.db as never,
    log,
    handle: async (report, tx) => {
      await applyReport(deps, tx, report, streams);
      afterChange();
    },
  });
}

export async function applyReport(deps: BackupDeps, tx: Tx, report: StrataReport, streams?: StreamSupervisor): Promise<void> {
  const at = new Date(report.occurredAt);
  switch (report.type) {
    case 'backup.started': {
      // Each report type has its own durable consumer (nats-server 2.9), so a start may arrive after the end.
      const data = report.data as StrataReports['backup.started'];
      await tx.backup.updateMany({ where: { id: data.backupId, phase: BACKUP_PHASES.running }, data: { message: `running on ${data.jobName}` } });
      await tx.backup.updateMany({ where: { id: data.backupId, startedAt: null }, data: { startedAt: new Date(data.startedAt) } });
      const row = await tx.backup.findUnique({ where: { id: data.backupId } });
      if (row) await afterPostponedStart(deps, tx, row);
      if (row) deps.notify(backupEvent(row, await catalogVersion(tx), 'started'));
      return;
    }
    case 'backup.postponed':
      await applyPostponed(deps, tx, report.data as StrataReports['backup.postponed']);
      return;
    case 'backup.succeeded': {
      const data = report.data as StrataReports['backup.succeeded'];
      await lockTargetOf(deps, tx, data.backupId);
      const manifest = data.manifest as { stats?: { rawBytes?: number; storedBytes?: number }; startedAt?: string; completedAt?: string };
      const row = await tx.backup.update({
        where: { id: data.backupId },
        data: {
          phase: BACKUP_PHASES.succeeded,
          message: '',
          manifest: data.manifest as never,
          manifestKey: data.manifestKey,
          completedAt: manifest.completedAt ? new Date(manifest.completedAt) : at,
          ...(manifest.startedAt ? { startedAt: new Date(manifest.startedAt) } : {}),
          rawBytes: BigInt(Math.round(manifest.stats?.rawBytes ?? 0)),
          storedBytes: BigInt(Math.round(manifest.stats?.storedBytes ?? 0)),
          progress: { stage: 'done', bytes: manifest.stats?.rawBytes ?? 0, totalBytes: manifest.stats?.rawBytes ?? 0, updatedAt: at.toISOString() },
        },
      });
      await deps.resources.patchStatus(tx, 'BackupTarget', row.namespace, row.targetName, {
        lastBackup: backupRefView(row),
        lastSuccessTime: (row.completedAt ?? at).toISOString(),
        serverVersion: ((data.manifest as { server?: { version?: string } }).server?.version) ?? '',
      });
      await recordBackupOutcome(tx, deps.resources, row, at);
      await createInPlaceRestores(deps).afterSafetyBackup(tx, row);
      if ((data.manifest as { mode?: string }).mode === 'physical') {
        const target = await deps.resources.get<TargetSpec>(tx, 'BackupTarget', row.namespace, row.targetName);
        if (target) await refreshChain(tx, deps.resources, target);
      }
      deps.notify(backupEvent(row, await bumpCatalogVersion(tx), 'done'));
      return;
    }
    case 'backup.failed': {
      const data = report.data as StrataReports['backup.failed'];
      await lockTargetOf(deps, tx, data.backupId);
      const row = await tx.backup.update({ where: { id: data.backupId }, data: { phase: BACKUP_PHASES.failed, message: data.message, completedAt: new Date(data.finishedAt) } });
      await createInPlaceRestores(deps).afterSafetyBackup(tx, row);
      await deps.resources.patchStatus(tx, 'BackupTarget', row.namespace, row.targetName, { lastBackup: backupRefView(row) });
      await recordBackupOutcome(tx, deps.resources, row, at);
      deps.notify(backupEvent(row, await bumpCatalogVersion(tx), 'failed'));
      return;
    }
    case 'restore.started': {
      const data = report.data as StrataReports['restore.started'];
      await tx.restore.updateMany({ where: { id: data.restoreId, phase: 'Running' }, data: { message: 'restoring' } });
      await tx.restore.updateMany({ where: { id: data.restoreId, startedAt: null }, data: { startedAt: new Date(data.startedAt) } });
      const row = await tx.restore.findUnique({ where: { id: data.restoreId } });
      if (row) deps.notify(restoreEvent(row, await catalogVersion(tx)));
      return;
    }
    case 'restore.succeeded': {
      const data = report.data as StrataReports['restore.succeeded'];
      const row = await tx.restore.update({
        where: { id: data.restoreId },
        data: { phase: 'Succeeded', message: data.message, completedAt: new Date(data.finishedAt), progress: { stage: 'done', bytes: 0, totalBytes: 0, updatedAt: data.finishedAt }, ...(data.checks ? { checks: data.checks } : {}) },
      });
      await recordVerification(deps, tx, row, { ...(data.checks ? { checks: data.checks } : {}), at: new Date(data.finishedAt) });
      deps.notify(restoreEvent(row, await bumpCatalogVersion(tx)));
      return;
    }
    case 'restore.failed': {
      const data = report.data as StrataReports['restore.failed'];
      const failed = await tx.restore.findUniqueOrThrow({ where: { id: data.restoreId } });
      const row = await tx.restore.update({ where: { id: data.restoreId }, data: { phase: 'Failed', message: wayBack(failed) ? `${data.message.replace(/\.$/, '')}.${wayBack(failed)}` : data.message, completedAt: new Date(data.finishedAt) } });
      await recordVerification(deps, tx, row, { failure: data.message, at: new Date(data.finishedAt) });
      deps.notify(restoreEvent(row, await bumpCatalogVersion(tx)));
      return;
    }
    case 'segment.uploaded':
      await recordSegment(deps, tx, report.data as StrataReports['segment.uploaded']);
      return;
    case 'stream.status':
      await streams?.applyStatus(tx, report.data as StrataReports['stream.status'], at);
      return;
    case 'audit.recorded': {
      const data = report.data as StrataReports['audit.recorded'];
      await tx.auditEvent.create({ data: { ...data, time: new Date(data.time), detail: data.detail as never } });
      return;
    }
  }
}

/**
 * Takes the backup's target row first, in the order `backup-now` takes it (the target, then a backup, whose trigger
 * renews the target's chain inputs): updating the backup first, then the target's status, could deadlock with it.
 */
async function lockTargetOf(deps: BackupDeps, tx: Tx, backupId: string): Promise<void> {
  const backup = await tx.backup.findUnique({ where: { id: backupId }, select: { namespace: true, targetName: true } });
  if (backup) await deps.resources.lock(tx, 'BackupTarget', backup.namespace, backup.targetName);
}

/**
 * Progress arrives on plain NATS (best effort, frequent). Every replica forwards it to its listeners;
 * it is written to the record at most every two seconds per run, so `activity` shows it too.
 */
export async function followProgress(deps: BackupDeps, bus: Pick<Bus, 'listen'>, log: Logger): Promise<{ stop(): void }> {
  const lastWrite = new Map<string, number>();
  const sub = await bus.listen(strataProgressWildcard(deps.cell), (report) => {
    try {
      assertProgressReport(report);
    } catch (error) {
      log.warn({ err: error }, 'ignored a progress report that does not match its schema');
      return;
    }
    const { kind, id, namespace, name, progress } = report;
    deps.notify({ kind, namespace, name, phase: 'Running', stage: progress.stage, message: '', bytes: progress.bytes, version: 0 });
    const now = Date.now();
    if (now - (lastWrite.get(id) ?? 0) < 2000) return;
    lastWrite.set(id, now);
    if (lastWrite.size > 1000) lastWrite.clear();
    const write = kind === 'backup'
      ? deps.db.backup.updateMany({ where: { id, phase: BACKUP_PHASES.running }, data: { progress: progress as never } })
      : deps.db.restore.updateMany({ where: { id, phase: 'Running' }, data: { progress: progress as never } });
    void write.catch((error: unknown) => log.warn({ err: error }, 'could not record progress'));
  });
  return { stop: () => sub.unsubscribe() };
}
