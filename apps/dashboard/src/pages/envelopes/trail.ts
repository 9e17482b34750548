import { ENVELOPE_EVENT_TYPES } from '@sigil/proto/gen/events';

/** One entry of an envelope's audit trail (docs/evidence.md), as the stream and the GraphQL AuditTrail carry it. */
export interface TrailEntry {
  seq: number;
  type: string;
  at: string;
  actor: { kind?: string; id?: string; recipientId?: string; ip?: string } & Record<string, unknown>;
  data: Record<string, unknown>;
}

/** The events evidence records in a trail (the events about one envelope, listed in proto): the stream names each message by one. */
export const AUDITED_TYPES = ENVELOPE_EVENT_TYPES;

const EMAIL_KINDS: Record<string, string> = {
  your_turn: 'signing link',
  reminder: 'reminder',
  otp_code: 'verification code',
  declined: 'declined notice',
  voided: 'void notice',
  expired: 'expiry notice',
  completed: 'completed document',
  viewer_link: 'status link for a viewer',
};

type Describe = (data: Record<string, unknown>, who: string) => string;

const text = (value: unknown) => (typeof value === 'string' ? value : '');
const withReason = (sentence: string, reason: unknown) => (text(reason) ? `${sentence}: “${text(reason)}”` : sentence);

const DESCRIPTIONS: Record<(typeof AUDITED_TYPES)[number], Describe> = {
  'envelope.created': () => 'Envelope created',
  'envelope.ready': () => 'Document prepared; the first recipients get their turn',
  'recipient.sent': (_, who) => `${who}'s turn began`,
  'recipient.viewed': (_, who) => `${who} opened the document`,
  'recipient.signed': (_, who) => `${who} signed`,
  'recipient.declined': (data, who) => withReason(`${who} declined`, data.reason),
  'envelope.declined': () => 'Envelope declined',
  'envelope.completed': () => 'Everyone signed: envelope completed',
  'envelope.sealed': () => 'Sealed: the signed document and its certificate are ready',
  'envelope.seal_failed': (data) => withReason('Sealing failed (retrying)', data.reason),
  'envelope.voided': (data) => withReason('Envelope voided', data.reason),
  'envelope.expired': () => 'Envelope expired',
  'email.delivered': (data) => `E-mail (${EMAIL_KINDS[text(data.kind)] ?? text(data.kind)}) sent to ${text(data.address)}`,
  'email.suppressed': (data) => `E-mail (${EMAIL_KINDS[text(data.kind)] ?? text(data.kind)}) to ${text(data.address)} not sent: test mode e-mails only your organization's members`,
  'envelope.reminded': (_, who) => `Reminder sent to ${who}`,
  'recipient.resent': (_, who) => `Signing link sent again to ${who}`,
  'otp.sent': (data, who) => `Verification code sent to ${who} by ${text(data.channel) === 'sms' ? 'SMS' : 'e-mail'}`,
  'otp.verified': (_, who) => `${who} verified their code`,
  'otp.failed': (_, who) => `${who} entered a wrong code`,
  'attachment.uploaded': (data, who) => `${who} attached ${text(data.fileName) || 'a file'}`,
  'viewer.added': (data) => `Viewer ${text(data.email)} added${data.documentAccess === true ? ', with access to the document' : ''}`,
  'viewer.revoked': (data) => `Viewer ${text(data.email)} revoked: their status link stopped working`,
  'viewer.opened': (data) => `Viewer ${text(data.email)} opened the status page`,
  'signing_link.used': (_, who) => `${who} started this envelope from an always-on signing link`,
};

/** What an entry says, in words; `nameOf` names a recipient by id. */
export function describeEntry(entry: TrailEntry, nameOf: (recipientId: string) => string | undefined): string {
  const recipientId = text(entry.data.recipientId) || text(entry.actor.recipientId);
  const who = (recipientId && nameOf(recipientId)) || 'A recipient';
  const describe = DESCRIPTIONS[entry.type as (typeof AUDITED_TYPES)[number]] as Describe | undefined;
  return describe ? describe(entry.data, who) : entry.type;
}

/** Who did it, when it was a person or a key (a signer's address, the member or API key), else nothing. */
export function actorOf(entry: TrailEntry): string | undefined {
  const { actor } = entry;
  if (actor.kind === 'recipient') return actor.ip ? `from ${actor.ip}` : undefined;
  if (actor.kind === 'session') return 'by a member in the dashboard';
  if (actor.kind === 'api_key') return `by API key ${actor.id ?? ''}`.trim();
  return undefined;
}
