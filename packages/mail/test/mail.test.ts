import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { composeMessage, createMailer, type EnvelopeMessageData, type MailBranding } from '../src/index.ts';

const common = { organizationName: 'Acme <script>alert(1)</script>', envelopeTitle: 'NDA "v2" & terms', recipientName: "Ada O'Brien <b>", testMode: false };
const ALL: EnvelopeMessageData[] = [
  { kind: 'your_turn', url: 'https://sign.example.com/sign#token=sgls_x', expiresAt: '2026-12-31T00:00:00Z', ...common },
  { kind: 'reminder', url: 'https://sign.example.com/sign#token=sgls_y', expiresAt: '2026-12-31T00:00:00Z', ...common },
  { kind: 'otp_code', code: '123456', minutes: 10, ...common },
  { kind: 'declined', declinedBy: 'Grace <i>', reason: 'Wrong "price"', ...common },
  { kind: 'voided', reason: '<img src=x onerror=alert(1)>', ...common },
  { kind: 'expired', ...common },
  { kind: 'completed', ...common },
  { kind: 'viewer_link', url: 'https://sign.example.com/view#token=sglv_z', documentAccess: true, ...common },
];

describe('composeMessage', () => {
  it.each(ALL)('$kind: HTML and text say the same, every user string escaped in HTML', (data) => {
    const message = composeMessage(data);
    expect(message.kind).toBe(data.kind);
    expect(message.subject).toContain('NDA "v2" & terms');
    expect(message.text).toContain("Hello Ada O'Brien <b>,");
    expect(message.text).toContain('Acme <script>alert(1)</script>');
    expect(message.html).not.toMatch(/<script>|<b>|<i>|<img/);
    expect(message.html).toContain('Acme &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(message.html).toContain('Ada O&#39;Brien &lt;b&gt;');
    for (const line of message.text.split('\n\n')) expect(message.html).toContain(line.includes(': https://') ? line.split(': ')[0] : line.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;'));
  });

  it('puts the link in both parts, and refuses a link that is not a web link', () => {
    const message = composeMessage(ALL[0]!);
    expect(message.text).toContain('Review and sign: https://sign.example.com/sign#token=sgls_x');
    expect(message.html).toContain('href="https://sign.example.com/sign#token=sgls_x"');
    expect(() => composeMessage({ ...(ALL[0] as Extract<EnvelopeMessageData, { kind: 'your_turn' | 'reminder' }>), url: 'javascript:alert(1)' })).toThrow(/javascript:/);
  });

  it('marks test envelopes in the subject and the body', () => {
    const message = composeMessage({ ...ALL[5]!, testMode: true });
    expect(message.subject).toMatch(/^\[TEST\] /);
    expect(message.text).toContain('TEST envelope: signing it has no legal effect');
  });

  it('invites to an organization: who invites, as what, the link in both parts, every user string escaped in HTML', () => {
    const message = composeMessage({ kind: 'invitation', organizationName: 'Acme <Legal>', inviterName: 'Ada <b>Owner</b>', role: 'an admin', url: 'https://sigil.example.com/app/accept-invitation?token=abc', expiresAt: '2026-12-31T00:00:00Z' });
    expect(message.kind).toBe('invitation');
    expect(message.subject).toBe('Ada <b>Owner</b> invited you to join Acme <Legal> on Sigil');
    expect(message.text).toContain('Ada <b>Owner</b> invited you to join Acme <Legal> on Sigil as an admin.');
    expect(message.text).toContain('Accept the invitation: https://sigil.example.com/app/accept-invitation?token=abc');
    expect(message.text).toContain('works until Thu, 31 Dec 2026');
    expect(message.text).not.toContain('TEST');
    expect(message.html).toContain('href="https://sigil.example.com/app/accept-invitation?token=abc"');
    expect(message.html).toContain('Ada &lt;b&gt;Owner&lt;/b&gt; invited you to join Acme &lt;Legal&gt;');
    expect(message.html).not.toMatch(/<b>|<Legal>/);
  });

  it('keeps the subject on one line', () => {
    expect(composeMessage({ ...ALL[5]!, envelopeTitle: 'Evil\r\nBcc: x@example.com' }).subject).not.toMatch(/[\r\n]/);
  });
});

describe('composeMessage with the organization branding', () => {
  const branding: MailBranding = {
    displayName: 'Acme <Legal>',
    customMessage: 'Please sign by <b>Friday</b>.\nThanks & regards',
    footer: 'Acme Ltd · 1 Main St <i>',
    removePoweredBy: false,
    logoUrl: 'https://sigil.example.com/v1/public/logos/org_1/abc.png',
  };

  it('names the display name instead of the organization, in the subject, the copy and as the sender', () => {
    const message = composeMessage(ALL[0]!, branding);
    expect(message.subject).toBe('Acme <Legal> asks you to sign “NDA "v2" & terms”');
    expect(message.text).toContain('Acme <Legal> sent you “NDA "v2" & terms” to sign.');
    expect(message.text).not.toContain('Acme <script>');
    expect(message.fromName).toBe('Acme <Legal>');
    expect(message.html).toContain('Acme &lt;Legal&gt; sent you');
  });

  it('shows the logo at the top (alt: the display name), the custom message quoted and escaped, the footer, and Powered by Sigil', () => {
    const message = composeMessage(ALL[0]!, branding);
    expect(message.html.indexOf('<img src="https://sigil.example.com/v1/public/logos/org_1/abc.png" alt="Acme &lt;Legal&gt;"')).toBeGreaterThan(0);
    expect(message.html.indexOf('<img')).toBeLessThan(message.html.indexOf('Hello'));
    expect(message.html).toMatch(/<blockquote[^>]*>Please sign by &lt;b&gt;Friday&lt;\/b&gt;.\nThanks &amp; regards<\/blockquote>/);
    expect(message.text).toContain('> Please sign by <b>Friday</b>.\n> Thanks & regards');
    expect(message.html).toContain('Acme Ltd · 1 Main St &lt;i&gt;');
    expect(message.html).not.toMatch(/<b>|<i>/);
    expect(message.text.endsWith('Acme Ltd · 1 Main St <i>\n\nPowered by Sigil.')).toBe(true);
  });

  it('removes Powered by Sigil when the branding says so, and quotes the message only in e-mails that ask to act', () => {
    const removed = composeMessage(ALL[6]!, { ...branding, removePoweredBy: true });
    expect(removed.text).not.toContain('Powered by');
    expect(removed.html).not.toContain('Powered by');
    expect(removed.text).not.toContain('Please sign by');
    expect(composeMessage(ALL[2]!, branding).text).not.toContain('Please sign by');
    expect(composeMessage(ALL[7]!, branding).text).toContain('> Please sign by');
  });

  it('leaves out a logo URL that is not a web URL, and is unbranded without branding', () => {
    const message = composeMessage(ALL[0]!, { ...branding, logoUrl: 'javascript:alert(1)' });
    expect(message.html).not.toContain('<img');
    const plain = composeMessage(ALL[0]!, null);
    expect(plain.fromName).toBeUndefined();
    expect(plain.text).toContain('Sent by Acme <script>alert(1)</script>.\n\nPowered by Sigil.');
  });
});

describe('createMailer', () => {
  it('delivers to the SMTP sink with the text and HTML parts', async () => {
    const inbox = process.env.SMTP_INBOX_URL;
    const url = process.env.SMTP_URL;
    expect(inbox && url, 'the test setup provides the SMTP sink').toBeTruthy();
    const to = `mail-${randomBytes(4).toString('hex')}@example.com`;
    const mailer = createMailer({ url: url as string, from: 'Sigil <no-reply@sigil.local>' });
    const sent = await mailer.send({ to, message: composeMessage({ ...ALL[0]!, testMode: true }) });
    mailer.close();
    expect(sent.messageId).toMatch(/@/);
    let found: { subject: string; text: string; html: string | null } | undefined;
    for (let i = 0; i < 200 && !found; i++) {
      const messages = (await (await fetch(`${inbox}/messages`)).json()) as Array<{ to: string[]; subject: string; text: string; html: string | null }>;
      found = messages.find((m) => m.to.includes(to));
      if (!found) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(found?.subject).toBe('[TEST] Acme <script>alert(1)</script> asks you to sign “NDA "v2" & terms”');
    expect(found?.text).toContain('Review and sign: https://sign.example.com/sign#token=sgls_x');
    expect(found?.html).toContain('href="https://sign.example.com/sign#token=sgls_x"');
  });

  it("sends a branded message from the organization's display name at the mailer's own address", async () => {
    const inbox = process.env.SMTP_INBOX_URL as string;
    const to = `branded-${randomBytes(4).toString('hex')}@example.com`;
    const mailer = createMailer({ url: process.env.SMTP_URL as string, from: 'Sigil <no-reply@sigil.local>' });
    await mailer.send({ to, message: composeMessage(ALL[0]!, { displayName: 'Acme Legal', customMessage: null, footer: null, removePoweredBy: false, logoUrl: null }) });
    mailer.close();
    let found: { id: string; from: string } | undefined;
    for (let i = 0; i < 200 && !found; i++) {
      found = ((await (await fetch(`${inbox}/messages?to=${encodeURIComponent(to)}`)).json()) as Array<{ id: string; from: string }>)[0];
      if (!found) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(found?.from).toBe('no-reply@sigil.local');
    const raw = await (await fetch(`${inbox}/messages/${found?.id}/raw`)).text();
    expect(raw).toMatch(/^From: "?Acme Legal"? <no-reply@sigil\.local>\r?$/m);
  });
});
