import { consumerName, startIdempotentConsumer, type Bus, type RunningConsumer } from '@sigil/kit/bus';
import { unseal } from '@sigil/kit/crypto';
import type { Logger } from '@sigil/kit/log';
import { STRATA_EVENTS_STREAM, strataEventSubject, type StrataReport, type StrataReports } from '@sigil/proto/strata-jobs';
import { decodeStrataReport } from '@sigil/proto/strata-wire';
import type { Db, Tx } from './db.ts';
import { runStatements } from './post-restore.ts';
import { PHASES, passwordContext } from './sandboxes.ts';
import { sandboxChanged, type TellConsole } from './console-events.ts';

export interface RestoreReportDeps {
  db: Db;
  secretsKey: Buffer;
  clock: () => Date;
  log: Logger;
  cell: string;
  /** A failed restore leaves nothing worth keeping: the reconciler wipes the server. */
  kick: () => void;
  /** Tells open console pages the sandbox is Ready (or failed). */
  notify?: TellConsole;
}

/**
 * The mover's restore reports, read by this service's own durable consumer: a sandbox whose restore succeeded runs
 * the target's `postRestoreSQL` and becomes Ready; one whose restore failed fails with the mover's message.
 */
export async function startRestoreReportConsumer(deps: RestoreReportDeps, bus: Bus): Promise<RunningConsumer> {
  return await startIdempotentConsumer<StrataReport, Tx>({
    bus,
    decode: decodeStrataReport,
    stream: STRATA_EVENTS_STREAM,
    durable: consumerName(deps.cell, 'sandbox-restore-reports'),
    filterSubjects: (['restore.succeeded', 'restore.failed'] as const).map((type) => strataEventSubject(type, deps.cell)),
    db: deps.db as never,
    log: deps.log,
    handle: async (report, tx) => {
      await applyRestoreReport(deps, tx, report);
    },
  });
}

export async function applyRestoreReport(deps: RestoreReportDeps, tx: Tx, report: StrataReport): Promise<void> {
  const data = report.data as StrataReports['restore.succeeded'] | StrataReports['restore.failed'];
  const row = await tx.sandbox.findFirst({ where: { restoreId: data.restoreId } });
  if (!row || row.phase !== PHASES.restoring) return;
  if (report.type === 'restore.failed') {
    const message = `the restore failed: ${data.message}`;
    await tx.sandbox.updateMany({ where: { id: row.id, phase: PHASES.restoring }, data: { phase: PHASES.failed, message } });
    sandboxChanged(deps.notify, row, PHASES.failed, message, deps.clock());
    deps.kick();
    return;
  }
  let message = `restored from backup ${row.backupId}`;
  if (row.postRestoreSql.length && row.port) {
    try {
      await runStatements(
        { engine: row.engine as 'postgres' | 'mysql', host: row.host, port: row.port, username: row.username, password: unseal(deps.secretsKey, row.sealedPassword, passwordContext(row)), database: row.database },
        row.postRestoreSql,
      );
      message += `; ran ${row.postRestoreSql.length} post-restore statement${row.postRestoreSql.length === 1 ? '' : 's'}`;
    } catch (error) {
      await tx.sandbox.updateMany({ where: { id: row.id, phase: PHASES.restoring }, data: { phase: PHASES.failed, message: `postRestoreSQL failed: ${(error as Error).message}` } });
      deps.kick();
      return;
    }
  }
  if (row.deleteAfter) {
    // A verification restore: the mover ran its checks before reporting; the sandbox has served its purpose.
    await tx.sandbox.updateMany({ where: { id: row.id, phase: PHASES.restoring }, data: { phase: PHASES.deleting, message: `${message}; deleted once restored (deleteAfter)`, readyAt: deps.clock() } });
    deps.kick();
    return;
  }
  await tx.sandbox.updateMany({ where: { id: row.id, phase: PHASES.restoring }, data: { phase: PHASES.ready, message, readyAt: deps.clock() } });
  sandboxChanged(deps.notify, row, PHASES.ready, message, deps.clock());
}
