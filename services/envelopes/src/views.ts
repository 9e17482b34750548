import type { components } from '@sigil/proto/api/sigil';
import type { Envelope, Recipient } from './generated/prisma/client.ts';
import type { EnvelopeStatus } from './state.ts';

export type EnvelopeRow = Envelope & { recipients: Recipient[] };

const iso = (date: Date | null) => date?.toISOString() ?? null;

/**
 * The API's Recipient. The contract fixes its id, role and status and allows more; the rest is what this service
 * answers (its type is what this returns).
 */
export function toRecipientView(row: Recipient) {
  return {
    id: row.id,
    object: 'recipient' as const,
    role: row.role,
    name: row.name,
    email: row.email,
    order: row.order,
    delivery: row.delivery,
    verification: row.verification,
    status: row.status,
    sentAt: iso(row.sentAt),
    viewedAt: iso(row.viewedAt),
    completedAt: iso(row.completedAt),
    declinedAt: iso(row.declinedAt),
  } satisfies components['schemas']['Recipient'];
}

export type RecipientView = ReturnType<typeof toRecipientView>;

/**
 * The API's Envelope (spec part 2, api-decisions.md), also the `envelope` of every envelope event. The contract fixes
 * some members and allows more; the rest is what this service answers (its type is what this returns).
 */
export function toEnvelopeView(row: EnvelopeRow) {
  return {
    id: row.id,
    object: 'envelope',
    status: row.status as EnvelopeStatus,
    seal: row.seal as components['schemas']['SealStatus'],
    testMode: row.testMode,
    template: row.templateId,
    templateVersion: row.templateVersion,
    externalId: row.externalId,
    metadata: (row.metadata ?? {}) as Record<string, string>,
    recipients: [...row.recipients].sort((a, b) => a.order - b.order || a.position - b.position).map(toRecipientView),
    cc: row.cc as NonNullable<components['schemas']['CreateEnvelope']['cc']>,
    pageCount: (row.pages as unknown[]).length,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    sentAt: iso(row.sentAt),
    completedAt: iso(row.completedAt),
    voidReason: row.voidReason,
    // Why the last render attempt failed while the envelope is still rendering (it is retried).
    renderError: row.status === 'rendering' ? row.renderError : null,
    // Why sealing failed while `seal` is `failed` (evidence keeps retrying; a later seal clears it).
    sealError: row.seal === 'failed' ? row.sealError : null,
  } satisfies components['schemas']['Envelope'];
}

export type EnvelopeView = ReturnType<typeof toEnvelopeView>;
