import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '@sigil/kit/bus';
import { silentLogger } from '@sigil/kit/testing';
import { createEvent, eventSubject } from '@sigil/proto/events';
import type { Db } from '../src/db.ts';
import { startTemplateUsageConsumer } from '../src/jobs/template-usage.ts';

/** A database that records what the consumer writes: processed message ids and template usages. */
function fakeDb() {
  const processed = new Set<string>();
  const usages: unknown[][] = [];
  const tx = {
    $executeRawUnsafe: async (sql: string, ...values: unknown[]) => {
      if (sql.includes('processed_messages')) {
        const key = `${String(values[0])}:${String(values[1])}`;
        if (processed.has(key)) return 0;
        processed.add(key);
        return 1;
      }
      usages.push(values);
      return 1;
    },
    $queryRawUnsafe: async () => [],
  };
  const db = { ...tx, $transaction: async <T>(fn: (t: typeof tx) => Promise<T>) => fn(tx) };
  return { db: db as unknown as Db, usages };
}

describe('template usage consumer (memory bus)', () => {
  it('records the template an envelope or signing link used, once per event, and ignores invalid events', async () => {
    const bus = createMemoryBus();
    const { db, usages } = fakeDb();
    const consumer = await startTemplateUsageConsumer(bus, db, silentLogger(), 'unit_');
    const org = `org_${'o'.repeat(24)}`;
    const templateId = `tpl_${'a'.repeat(24)}`;
    const envelope = createEvent('envelope.created', org, { envelopeId: `env_${'b'.repeat(24)}`, templateId, testMode: true });
    await bus.publish(eventSubject('envelope.created'), envelope, { msgId: envelope.id });
    await bus.publish(eventSubject('envelope.created'), envelope); // a redelivery: same event id
    const link = createEvent('signing_link.created', org, { signingLinkId: `lnk_${'c'.repeat(24)}`, templateId, testMode: false });
    await bus.publish(eventSubject('signing_link.created'), link, { msgId: link.id });
    await bus.publish(eventSubject('signing_link.created'), { ...link, id: 'not-an-event-id', data: { templateId: 42 } });
    await consumer.idle();
    await consumer.stop();
    expect(usages).toEqual([
      [templateId, org, 'envelope', envelope.data.envelopeId, new Date(envelope.occurredAt)],
      [templateId, org, 'signing_link', link.data.signingLinkId, new Date(link.occurredAt)],
    ]);
  });
});
