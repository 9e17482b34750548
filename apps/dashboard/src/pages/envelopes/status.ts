import type { components } from '@sigil/proto/api/sigil';

export type EnvelopeStatus = components['schemas']['EnvelopeStatus'];
export type SealStatus = components['schemas']['SealStatus'];

/** Every envelope status of the contract, in the order an envelope lives them, with the words people read. */
export const ENVELOPE_STATUS_LABELS: Record<EnvelopeStatus, string> = {
  rendering: 'Preparing',
  sent: 'In progress',
  completed: 'Completed',
  declined: 'Declined',
  voided: 'Voided',
  expired: 'Expired',
};

export const SEAL_STATUS_LABELS: Record<SealStatus, string> = {
  not_started: 'Not sealed yet',
  pending: 'Sealing',
  sealed: 'Sealed',
  failed: 'Sealing failed',
};

export const ENVELOPE_STATUSES = Object.keys(ENVELOPE_STATUS_LABELS) as EnvelopeStatus[];
export const SEAL_STATUSES = Object.keys(SEAL_STATUS_LABELS) as SealStatus[];

/** Live-update types that change what envelope lists and pages show. */
export const ENVELOPE_CHANGES = ['envelope.', 'recipient.'] as const;

/** The moment `days` days ago, to the minute (so a query's variables stay the same for a while and its cache holds). */
export function daysAgo(days: number, now = Date.now()): string {
  const minute = 60_000;
  return new Date(Math.floor((now - days * 86_400_000) / minute) * minute).toISOString();
}
