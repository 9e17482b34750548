import escapeHtml from 'escape-html';
import { brandedName, brandingParts, type MailBranding } from './branding.ts';

/** What every message about an envelope names: who sends it (the organization) and whether the envelope is a test. */
interface Common {
  organizationName: string;
  envelopeTitle: string;
  recipientName: string;
  testMode: boolean;
}

/** The data of each kind of message about an envelope: a wrong or missing member is a type error. */
export type EnvelopeMessageData =
  | ({ kind: 'your_turn' | 'reminder'; url: string; expiresAt: string } & Common)
  | ({ kind: 'otp_code'; code: string; minutes: number } & Common)
  | ({ kind: 'declined'; declinedBy: string; reason: string | null } & Common)
  | ({ kind: 'voided'; reason: string | null } & Common)
  | ({ kind: 'expired' } & Common)
  | ({ kind: 'completed' } & Common)
  | ({ kind: 'viewer_link'; url: string; documentAccess: boolean } & Common);

/** An invitation to join an organization's dashboard: who invites, as what, and the link to accept it. */
export interface InvitationMessageData {
  kind: 'invitation';
  organizationName: string;
  inviterName: string;
  /** The role's words, e.g. `an admin`. */
  role: string;
  url: string;
  expiresAt: string;
}

export type MessageData = EnvelopeMessageData | InvitationMessageData;

export type MessageKind = MessageData['kind'];

export interface Message {
  /** The kind of message (`sms` for a text message delivered to the local inbox). */
  kind: MessageKind | 'sms';
  subject: string;
  text: string;
  html: string;
  /** The sender's display name (the organization's branding); the mailer's own `from` name when absent. */
  fromName?: string;
}

/**
 * One paragraph of a message: plain text, escaped for HTML (`quote`: a quoted paragraph, `small`: the footer's type);
 * a link button; or an image (the logo, HTML only).
 */
export type Part = { text: string; style?: 'quote' | 'small' } | { link: string; label: string } | { image: string; alt: string };

/** Only web links go into messages: anything else (`javascript:`, `data:`) is refused. */
export function webLink(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error(`refusing a ${parsed.protocol} link in an e-mail`);
  return parsed.toString();
}

const day = (iso: string) => new Date(iso).toUTCString().replace(/ \d{2}:\d{2}:\d{2} GMT$/, '');

function invitationParts(data: InvitationMessageData): { subject: string; body: Part[] } {
  return {
    subject: `${data.inviterName} invited you to join ${data.organizationName} on Sigil`,
    body: [
      { text: `${data.inviterName} invited you to join ${data.organizationName} on Sigil as ${data.role}.` },
      { link: webLink(data.url), label: 'Accept the invitation' },
      { text: `The link is yours alone and works until ${day(data.expiresAt)}. If you did not expect this invitation, ignore this e-mail.` },
    ],
  };
}

function envelopeParts(data: EnvelopeMessageData): { subject: string; body: Part[] } {
  const title = `“${data.envelopeTitle}”`;
  switch (data.kind) {
    case 'your_turn':
    case 'reminder':
      return {
        subject: `${data.kind === 'reminder' ? 'Reminder: ' : ''}${data.organizationName} asks you to sign ${title}`,
        body: [
          { text: `${data.organizationName} sent you ${title} to sign${data.kind === 'reminder' ? ', and it is still waiting for you' : ''}.` },
          { link: webLink(data.url), label: 'Review and sign' },
          { text: `The link is yours alone and works until ${day(data.expiresAt)}. Do not forward this e-mail.` },
        ],
      };
    case 'otp_code':
      return {
        subject: `Your code to sign ${title}: ${data.code}`,
        body: [{ text: `Your one-time code is ${data.code}. It is valid for ${data.minutes} minutes.` }, { text: 'If you did not ask for it, ignore this e-mail.' }],
      };
    case 'declined':
      return {
        subject: `${title} was declined`,
        body: [{ text: `${data.declinedBy} declined to sign ${title}, so it will not be completed.` }, ...(data.reason ? [{ text: `Their reason: ${data.reason}` }] : [])],
      };
    case 'voided':
      return {
        subject: `${title} was cancelled by ${data.organizationName}`,
        body: [{ text: `${data.organizationName} cancelled ${title}; there is nothing left for you to sign.` }, ...(data.reason ? [{ text: `Reason: ${data.reason}` }] : [])],
      };
    case 'expired':
      return { subject: `${title} expired`, body: [{ text: `${title} from ${data.organizationName} expired before everyone signed. Its links no longer work.` }] };
    case 'viewer_link':
      return {
        subject: `${data.organizationName} shared the progress of ${title} with you`,
        body: [
          { text: `${data.organizationName} invited you to follow ${title} as it is signed: who has signed, and who it is waiting for.${data.documentAccess ? ' You can read the document too.' : ''}` },
          { link: webLink(data.url), label: 'View the status' },
          { text: 'The link is yours alone and read-only; do not forward this e-mail.' },
        ],
      };
    case 'completed':
      return { subject: `${title} is complete`, body: [{ text: `Everyone has signed ${title} from ${data.organizationName}.` }, { text: 'The signed document is attached; its sealed copy, with the digital signature and the certificate of completion, comes from the sender.' }] };
  }
}

const STYLES = {
  quote: 'margin:16px 0;padding:4px 0 4px 14px;border-left:3px solid #c9d1dc;color:#3a4350;white-space:pre-line',
  small: 'font-size:12px;color:#5d6673;white-space:pre-line',
  button: 'display:inline-block;background:#2450d3;color:#fff;padding:10px 18px;border-radius:6px;text-decoration:none',
  image: 'max-height:56px;max-width:220px;border:0',
} as const;

function textOf(part: Part): string | undefined {
  if ('image' in part) return undefined;
  if ('link' in part) return `${part.label}: ${part.link}`;
  return part.style === 'quote' ? part.text.split('\n').map((line) => `> ${line}`).join('\n') : part.text;
}

function htmlOf(part: Part): string {
  if ('image' in part) return `<p><img src="${escapeHtml(part.image)}" alt="${escapeHtml(part.alt)}" style="${STYLES.image}"></p>`;
  if ('link' in part) return `<p><a href="${escapeHtml(part.link)}" style="${STYLES.button}">${escapeHtml(part.label)}</a></p>`;
  if (part.style === 'quote') return `<blockquote style="${STYLES.quote}">${escapeHtml(part.text)}</blockquote>`;
  if (part.style === 'small') return `<p style="${STYLES.small}">${escapeHtml(part.text)}</p>`;
  return `<p>${escapeHtml(part.text)}</p>`;
}

/**
 * The message of a kind: a subject, and HTML and text parts that say the same, every user string escaped in HTML.
 * With the organization's branding: its display name instead of its name (and as the sender's name), its logo at the
 * top, its custom message quoted in the e-mails that ask the recipient to act, its footer, and no "Powered by Sigil"
 * when it removed it. Branding is plain text like every other user string.
 */
export function composeMessage(message: MessageData, branding?: MailBranding | null): Message {
  const name = brandedName(message.organizationName, branding);
  const data = { ...message, organizationName: name } as MessageData;
  const invitation = data.kind === 'invitation';
  const { subject, body } = invitation ? invitationParts(data) : envelopeParts(data);
  const testMode = !invitation && data.testMode;
  const test = testMode ? [{ text: 'This is a TEST envelope: signing it has no legal effect.' }] : [];
  const greeting = invitation ? 'Hello,' : `Hello ${data.recipientName},`;
  const brand = brandingParts(data.kind, name, branding);
  const all: Part[] = [...brand.top, { text: greeting }, ...test, ...body.slice(0, 1), ...brand.message, ...body.slice(1), { text: `Sent by ${name}.` }, ...brand.bottom];
  const text = all.map(textOf).filter((line) => line !== undefined).join('\n\n');
  const html = ['<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1b1f24;max-width:560px">', ...all.map(htmlOf), '</body></html>'].join('\n');
  return {
    kind: data.kind,
    subject: `${testMode ? '[TEST] ' : ''}${subject}`.replace(/[\r\n]+/g, ' '),
    text,
    html,
    ...(branding?.displayName ? { fromName: name } : {}),
  };
}
