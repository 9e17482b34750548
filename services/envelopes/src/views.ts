import type { Envelope, Recipient } from './generated/prisma/client.ts';
import type { EnvelopeStatus } from './state.ts';

export type EnvelopeRow = Envelope & { recipients: Recipient[] };

export type RecipientView = {
  id: string;
  object: 'recipient';
  role: string;
  name: string;
  email: string;
  order: number;
  delivery: string;
  verification: string;
  status: string;
  sentAt: string | null;
  viewedAt: string | null;
  completedAt: string | null;
  declinedAt: string | null;
};

/** The API's Envelope (spec part 2, api-decisions.md), also the `envelope` of every envelope event. */
export type EnvelopeView = {
  id: string;
  object: 'envelope';
  status: EnvelopeStatus;
  seal: 'not_started' | 'pending' | 'sealed' | 'failed';
  testMode: boolean;
  template: string;
  templateVersion: number;
  externalId: string | null;
  metadata: Record<string, string>;
  recipients: RecipientView[];
  cc: Array<{ name?: string; email: string }>;
  pageCount: number;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  sentAt: string | null;
  completedAt: string | null;
  voidReason: string | null;
  /** Why the last render attempt failed while the envelope is still rendering (it is retried), else null. */
  renderError: string | null;
  /** Why sealing failed while `seal` is `failed` (evidence keeps retrying; a later seal clears it), else null. */
  sealError: string | null;
};

const iso = (date: Date | null) => date?.toISOString() ?? null;

export function toRecipientView(row: Recipient): RecipientView {
  return {
    id: row.id,
    object: 'recipient',
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
  };
}

export function toEnvelopeView(row: EnvelopeRow): EnvelopeView {
  return {
    id: row.id,
    object: 'envelope',
    status: row.status as EnvelopeStatus,
    seal: row.seal as EnvelopeView['seal'],
    testMode: row.testMode,
    template: row.templateId,
    templateVersion: row.templateVersion,
    externalId: row.externalId,
    metadata: (row.metadata ?? {}) as Record<string, string>,
    recipients: [...row.recipients].sort((a, b) => a.order - b.order || a.position - b.position).map(toRecipientView),
    cc: row.cc as EnvelopeView['cc'],
    pageCount: (row.pages as unknown[]).length,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    sentAt: iso(row.sentAt),
    completedAt: iso(row.completedAt),
    voidReason: row.voidReason,
    renderError: row.status === 'rendering' ? row.renderError : null,
    sealError: row.seal === 'failed' ? row.sealError : null,
  };
}
