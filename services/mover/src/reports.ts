import { randomUUID } from 'node:crypto';
import type { Bus } from '@sigil/kit/bus';
import { strataEventSubject, strataProgressSubject, type Progress, type ProgressReport, type StrataReport, type StrataReports } from '@sigil/proto/strata-jobs';
import { assertStrataReport } from '@sigil/proto/strata-wire';

/** How the mover tells the catalog what happened: durable reports on JetStream, progress as best-effort notifications. */
export interface Reporter {
  report<K extends keyof StrataReports>(type: K, data: StrataReports[K]): Promise<void>;
  progress(kind: 'backup' | 'restore', id: string, namespace: string, name: string, progress: Omit<Progress, 'updatedAt'>): void;
}

export function createReporter(bus: Pick<Bus, 'publish' | 'notify'>, cell = ''): Reporter {
  return {
    async report(type, data) {
      const message: StrataReport = { id: randomUUID(), type, occurredAt: new Date().toISOString(), data };
      assertStrataReport(message);
      await bus.publish(strataEventSubject(type, cell), message, { msgId: message.id });
    },
    progress(kind, id, namespace, name, progress) {
      // Best effort: checked by the catalog when it arrives (an odd figure must never stop a running backup here).
      const report: ProgressReport = { kind, id, namespace, name, progress: { ...progress, updatedAt: new Date().toISOString() } };
      bus.notify(strataProgressSubject(kind, id, cell), report);
    },
  };
}
