import { randomUUID } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { strataEventSubject, strataProgressSubject, type Progress, type StrataReport, type StrataReports } from '@sigil/proto';

/** How the mover tells the catalog what happened: durable reports on JetStream, progress on plain NATS. */
export interface Reporter {
  report<K extends keyof StrataReports>(type: K, data: StrataReports[K]): Promise<void>;
  progress(kind: 'backup' | 'restore', id: string, namespace: string, name: string, progress: Omit<Progress, 'updatedAt'>): void;
}

export function createReporter(nc: NatsConnection, js: JetStreamClient, cell = ''): Reporter {
  return {
    async report(type, data) {
      const message: StrataReport = { id: randomUUID(), type, occurredAt: new Date().toISOString(), data };
      await js.publish(strataEventSubject(type, cell), JSON.stringify(message), { msgID: message.id });
    },
    progress(kind, id, namespace, name, progress) {
      nc.publish(strataProgressSubject(kind, id, cell), JSON.stringify({ kind, id, namespace, name, progress: { ...progress, updatedAt: new Date().toISOString() } }));
    },
  };
}
