/**
 * Counting usage: one row per counted thing, keyed by what it counts (the envelope, the event that reported an SMS
 * code), so a second delivery, a replay after a restart or another replica counts nothing more. Live mode only.
 */
import type { DomainEvent } from '@sigil/proto/events';
import type { Tx } from '../db.ts';

/** The meters usage is counted on: completed envelopes and the metered add-ons. */
export const METERS = ['envelopes', 'smsOtp', 'idCheck', 'qesSignature'] as const;
export type Meter = (typeof METERS)[number];

export interface UsageRecordInput {
  meter: Meter;
  /** What makes it one: the envelope id, or the id of the event that reported the add-on. */
  subject: string;
  organizationId: string;
  occurredAt: Date;
}

/** The record an event counts as, or undefined when it counts nothing (test mode, an e-mailed code). */
export function usageOf(event: DomainEvent): UsageRecordInput | undefined {
  const occurredAt = new Date(event.occurredAt);
  if (event.type === 'envelope.completed') {
    const data = event.data as DomainEvent<'envelope.completed'>['data'];
    return data.testMode ? undefined : { meter: 'envelopes', subject: data.envelopeId, organizationId: event.organizationId, occurredAt };
  }
  if (event.type === 'otp.sent') {
    const data = event.data as DomainEvent<'otp.sent'>['data'];
    return data.testMode || data.channel !== 'sms' ? undefined : { meter: 'smsOtp', subject: event.id, organizationId: event.organizationId, occurredAt };
  }
  return undefined;
}

/** Counts it once; answers whether this call counted it. */
export async function countUsage(tx: Tx, record: UsageRecordInput): Promise<boolean> {
  const inserted = await tx.$executeRawUnsafe(
    'INSERT INTO usage_records (meter, subject, organization_id, occurred_at) VALUES ($1, $2, $3, $4) ON CONFLICT (meter, subject) DO NOTHING',
    record.meter,
    record.subject,
    record.organizationId,
    record.occurredAt,
  );
  return inserted === 1;
}
