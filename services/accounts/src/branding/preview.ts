import { AppError } from '@sigil/kit/errors';
import { composeMessage, type MailBranding, type MessageData, type MessageKind } from '@sigil/mail';

/**
 * The sample e-mails of a branding preview: each kind the organization's recipients get, with made-up envelope data,
 * composed by the same `composeMessage` the real e-mails use. `signing_request` is the default (`your_turn`).
 */
const TEMPLATES = ['signing_request', 'your_turn', 'reminder', 'otp_code', 'declined', 'voided', 'expired', 'completed', 'viewer_link', 'invitation'] as const;
type Template = (typeof TEMPLATES)[number];

export function parseTemplate(value: unknown): MessageKind {
  if (value === undefined || value === null) return 'your_turn';
  if (typeof value !== 'string' || !(TEMPLATES as readonly string[]).includes(value)) {
    const detail = `must be one of ${TEMPLATES.join(', ')}`;
    throw new AppError('validation-failed', `Field template ${detail}.`, { errors: [{ pointer: '/body/template', detail }] });
  }
  return (value as Template) === 'signing_request' ? 'your_turn' : (value as MessageKind);
}

const DAY_MS = 24 * 60 * 60_000;

function sampleData(kind: MessageKind, organizationName: string, publicUrl: string, now: Date): MessageData {
  const common = { organizationName, envelopeTitle: 'Sample agreement', recipientName: 'Alex Example', testMode: false };
  const expiresAt = new Date(now.getTime() + 14 * DAY_MS).toISOString();
  switch (kind) {
    case 'your_turn':
    case 'reminder':
      return { kind, url: `${publicUrl}/sign#token=sample`, expiresAt, ...common };
    case 'otp_code':
      return { kind, code: '123456', minutes: 10, ...common };
    case 'declined':
      return { kind, declinedBy: 'Sam Signer', reason: 'The dates are wrong.', ...common };
    case 'voided':
      return { kind, reason: 'Replaced by a new version.', ...common };
    case 'expired':
    case 'completed':
      return { kind, ...common };
    case 'viewer_link':
      return { kind, url: `${publicUrl}/view#token=sample`, documentAccess: true, ...common };
    case 'invitation':
      return { kind, organizationName, inviterName: 'Ada Owner', role: 'a member', url: `${publicUrl}/app/accept-invitation?token=sample`, expiresAt: new Date(now.getTime() + 7 * DAY_MS).toISOString() };
  }
}

export function renderPreview(kind: MessageKind, organizationName: string, branding: MailBranding, publicUrl: string, now: Date) {
  const message = composeMessage(sampleData(kind, organizationName, publicUrl, now), branding);
  return { object: 'email_preview' as const, subject: message.subject, html: message.html, text: message.text, ...(message.fromName ? { fromName: message.fromName } : {}) };
}
