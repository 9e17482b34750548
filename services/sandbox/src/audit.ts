import { randomUUID } from 'node:crypto';
import type { WriteRecord } from '@sigil/kit/api/strata';
import { strataEventSubject, type StrataReport } from '@sigil/proto/strata-jobs';
import { assertStrataReport } from '@sigil/proto/strata-wire';
import type { DbOrTx } from './db.ts';

/**
 * The console has one audit log, the catalog's: sandbox operations reach it as `audit.recorded` reports through this
 * service's outbox, so a record is sent exactly when the change it describes committed, even if the catalog is down.
 */
export async function recordAudit(tx: DbOrTx, cell: string, record: WriteRecord): Promise<void> {
  const report: StrataReport<'audit.recorded'> = { id: randomUUID(), type: 'audit.recorded', occurredAt: new Date().toISOString(), data: { ...record, time: record.time.toISOString() } };
  assertStrataReport(report as StrataReport);
  await tx.$executeRawUnsafe(
    `INSERT INTO outbox_events (id, subject, payload) VALUES ($1, $2, $3::jsonb)`,
    report.id,
    strataEventSubject('audit.recorded', cell),
    JSON.stringify(report),
  );
  await tx.$executeRawUnsafe(`SELECT pg_notify('outbox_events', '')`);
}
