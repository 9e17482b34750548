import type { components } from '@sigil/proto/api/sigil';
import type { Envelope, EnvelopeViewer, Prisma, Recipient } from './generated/prisma/client.ts';
import type { EnvelopeStatus } from './state.ts';

export type EnvelopeRow = Envelope & { recipients: Recipient[]; viewers: EnvelopeViewer[] };

/** What every read of an envelope that becomes an answer or an event includes. */
export const ENVELOPE_INCLUDE = { recipients: true, viewers: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } } satisfies Prisma.EnvelopeInclude;

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

/** The API's Viewer (api-decisions.md, "Viewers"); never its tokens. */
export function toViewerView(row: EnvelopeViewer) {
  return {
    id: row.id,
    object: 'viewer' as const,
    email: row.email,
    name: row.name,
    documentAccess: row.documentAccess,
    createdAt: row.createdAt.toISOString(),
    firstOpenedAt: iso(row.firstOpenedAt),
    revokedAt: iso(row.revokedAt),
  } satisfies components['schemas']['Viewer'];
}

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
    viewers: row.viewers.map(toViewerView),
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
