import type { WriteRecord } from '@sigil/kit/api/strata';
import { storableCopy } from '@sigil/kit/db';
import type { Db } from '../db.ts';

/** The console's audit log: every write, whatever its outcome, newest first when read. */
export function createAuditLog(db: Db) {
  return {
    /** Recorded as sent, but for characters PostgreSQL cannot store (a refused request's NUL), which become U+FFFD. */
    async record(record: WriteRecord): Promise<void> {
      const { time, ...sent } = record;
      await db.auditEvent.create({ data: { time, ...storableCopy(sent), detail: storableCopy(record.detail) as never } });
    },
    async list(filters: { action?: string; user?: string; limit: number }) {
      const rows = await db.auditEvent.findMany({
        where: { ...(filters.action ? { action: filters.action } : {}), ...(filters.user ? { user: filters.user } : {}) },
        orderBy: [{ time: 'desc' }, { id: 'desc' }],
        take: filters.limit,
      });
      return rows.map((r) => ({ time: r.time.toISOString(), user: r.user, role: r.role, action: r.action, target: r.target, object: r.object, outcome: r.outcome, from: r.from, detail: r.detail }));
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
