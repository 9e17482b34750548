// What the viewer page shows, from the API's answers alone (no DOM here): the envelope's state, each recipient's, what
// changed between two reads (announced to screen readers), and when to refresh the access token or reconnect.

/** The envelope's status as a badge, a one-line explanation, and whether it is over. */
export const ENVELOPE_STATES = {
  rendering: { label: 'Preparing', tone: 'neutral', summary: 'The document is being prepared for signing.', over: false },
  sent: { label: 'In progress', tone: 'progress', summary: 'Waiting for signatures.', over: false },
  completed: { label: 'Completed', tone: 'success', summary: 'Everyone has signed. The document is complete.', over: true },
  declined: { label: 'Declined', tone: 'danger', summary: 'A recipient declined to sign, so the document will not be completed.', over: true },
  voided: { label: 'Voided', tone: 'danger', summary: 'The sender cancelled this document: it will not be signed.', over: true },
  expired: { label: 'Expired', tone: 'warning', summary: 'The document expired before everyone signed.', over: true },
};

/** The sending organization's logo as the page shows it (`<img src alt>`): a web URL only, its name as the text. */
export function logoOf(envelope) {
  const src = typeof envelope.logoUrl === 'string' && /^https?:\/\//i.test(envelope.logoUrl) ? envelope.logoUrl : null;
  return src ? { src, alt: envelope.organizationName || 'The sender' } : null;
}

export function envelopeState(status) {
  return ENVELOPE_STATES[status] ?? { label: status, tone: 'neutral', summary: '', over: false };
}

const RECIPIENT_STATES = {
  pending: { label: 'Not sent yet', tone: 'neutral' },
  sent: { label: 'Waiting to sign', tone: 'progress' },
  viewed: { label: 'Opened', tone: 'progress' },
  completed: { label: 'Signed', tone: 'success' },
  declined: { label: 'Declined', tone: 'danger' },
};

export function recipientState(status) {
  return RECIPIENT_STATES[status] ?? { label: status, tone: 'neutral' };
}

/** When the recipient signed (or declined): the API's `signedAt`, else `completedAt`/`declinedAt`. */
export function recipientTime(recipient) {
  return recipient.signedAt ?? recipient.completedAt ?? recipient.declinedAt ?? null;
}

/** A recipient's name for sentences: their name, else their role ("the client"). */
export function whoIs(recipient) {
  return recipient.name || `The ${recipient.role}`;
}

/** How many of those who sign have signed. */
export function progress(envelope) {
  const recipients = envelope.recipients ?? [];
  return { signed: recipients.filter((r) => r.status === 'completed').length, total: recipients.length };
}

const keyOf = (recipient, index) => recipient.id ?? `${index}:${recipient.role}`;

/** Sentences for what changed from one read to the next: "Ada Lovelace signed.", "The document is completed." */
export function changes(before, after) {
  if (!before) return [];
  const said = [];
  const earlier = new Map((before.recipients ?? []).map((r, i) => [keyOf(r, i), r]));
  (after.recipients ?? []).forEach((recipient, i) => {
    const was = earlier.get(keyOf(recipient, i));
    if (!was || was.status === recipient.status) return;
    if (recipient.status === 'completed') said.push(`${whoIs(recipient)} signed.`);
    else if (recipient.status === 'declined') said.push(`${whoIs(recipient)} declined to sign.`);
    else if (recipient.status === 'viewed') said.push(`${whoIs(recipient)} opened the document.`);
    else if (recipient.status === 'sent') said.push(`It is now ${whoIs(recipient)}'s turn to sign.`);
  });
  if (before.status !== after.status) said.push(`Status: ${envelopeState(after.status).label}. ${envelopeState(after.status).summary}`.trim());
  if (!before.documentAvailable && after.documentAvailable) said.push('The document can now be downloaded.');
  return said;
}

/** Milliseconds until the access token should be exchanged again: a minute before it expires, at least 5 s from now. */
export function refreshDelay(expiresAt, now = Date.now()) {
  return Math.max(5_000, Date.parse(expiresAt) - now - 60_000);
}

/** Milliseconds before reconnecting the live stream after `attempt` failures in a row: 1 s doubling to 30 s. */
export function reconnectDelay(attempt, jitter = 0) {
  return Math.min(30_000, 1_000 * 2 ** Math.max(0, attempt)) + Math.round(jitter * 500);
}

/** The page's end state for a refused exchange or read: the link is not (or no longer) valid, or access was revoked. */
export function refusal(status, started) {
  if (status === 401 || status === 403 || status === 404) return started ? 'revoked' : 'invalid';
  return 'failed';
}
