import { AppError } from '@sigil/kit/errors';
import type { components } from '@sigil/proto/api/sigil';

/**
 * The one state machine of envelopes and recipients (spec part 3). Every status change goes through `transition`, so a
 * refused change is the same 409 wherever it is asked for; `docs/envelopes.md` has the table.
 */
export const ENVELOPE_STATUSES = ['rendering', 'sent', 'completed', 'declined', 'voided', 'expired'] as const;
export type EnvelopeStatus = (typeof ENVELOPE_STATUSES)[number];

/** The contract's SealStatus: where the envelope's seal stands. */
export const SEAL_STATUSES = ['not_started', 'pending', 'sealed', 'failed'] as const satisfies readonly components['schemas']['SealStatus'][];

export const RECIPIENT_STATUSES = ['pending', 'sent', 'viewed', 'completed', 'declined'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

/** "In progress" (api-decisions.md): what may still be voided, expired, signed or declined. */
export const IN_PROGRESS: readonly EnvelopeStatus[] = ['rendering', 'sent'];

interface Transition<S extends string> {
  from: readonly S[];
  to: S;
}

export const ENVELOPE_TRANSITIONS = {
  /** The document is rendered: recipients get their turn. */
  rendered: { from: ['rendering'], to: 'sent' },
  void: { from: ['rendering', 'sent'], to: 'voided' },
  expire: { from: ['rendering', 'sent'], to: 'expired' },
  /** Every recipient finished. */
  complete: { from: ['sent'], to: 'completed' },
  /** A recipient declined: the envelope ends. */
  decline: { from: ['sent'], to: 'declined' },
} as const satisfies Record<string, Transition<EnvelopeStatus>>;
export type EnvelopeAction = keyof typeof ENVELOPE_TRANSITIONS;

export const RECIPIENT_TRANSITIONS = {
  /** Their turn came (or, with parallel orders, came at once for several). */
  turn: { from: ['pending'], to: 'sent' },
  /** First view of the signing page. */
  view: { from: ['sent'], to: 'viewed' },
  sign: { from: ['sent', 'viewed'], to: 'completed' },
  decline: { from: ['sent', 'viewed'], to: 'declined' },
} as const satisfies Record<string, Transition<RecipientStatus>>;
export type RecipientAction = keyof typeof RECIPIENT_TRANSITIONS;

const WHY: Record<EnvelopeAction, string> = {
  rendered: 'is not rendering',
  void: 'is not in progress',
  expire: 'is not in progress',
  complete: 'has not been sent',
  decline: 'has not been sent',
};

/** The status after `action`, or a 409 naming the envelope's status. */
export function envelopeTransition(status: string, action: EnvelopeAction, id = 'The envelope'): EnvelopeStatus {
  const rule: Transition<EnvelopeStatus> = ENVELOPE_TRANSITIONS[action];
  if (!rule.from.includes(status as EnvelopeStatus)) throw new AppError('conflict', `${id} ${WHY[action]} (it is ${status}).`);
  return rule.to;
}

export function recipientTransition(status: string, action: RecipientAction, id = 'The recipient'): RecipientStatus {
  const rule: Transition<RecipientStatus> = RECIPIENT_TRANSITIONS[action];
  if (!rule.from.includes(status as RecipientStatus)) throw new AppError('conflict', `${id} cannot ${action} while ${status}.`);
  return rule.to;
}

export function canTransition(status: string, action: EnvelopeAction): boolean {
  return (ENVELOPE_TRANSITIONS[action].from as readonly string[]).includes(status);
}

export interface RoutedRecipient {
  id: string;
  order: number;
  status: string;
}

/**
 * Routing: recipients sign by ascending `order`; equal orders sign in parallel. The next turn belongs to the lowest
 * order with anyone unfinished; it starts only once every recipient of every lower order completed. Returns who gets
 * the turn now (pending recipients of that order), and whether everyone finished.
 */
export function nextTurn(recipients: readonly RoutedRecipient[]): { start: string[]; done: boolean } {
  const unfinished = recipients.filter((r) => r.status !== 'completed');
  if (unfinished.length === 0) return { start: [], done: true };
  const order = Math.min(...unfinished.map((r) => r.order));
  return { start: unfinished.filter((r) => r.order === order && r.status === 'pending').map((r) => r.id), done: false };
}

/** Whether it is this recipient's turn: sent to or viewing, on an envelope that was sent. */
export function isRecipientsTurn(envelopeStatus: string, recipientStatus: string): boolean {
  return envelopeStatus === 'sent' && (recipientStatus === 'sent' || recipientStatus === 'viewed');
}
