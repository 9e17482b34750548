import type { Mailer } from './mailer.ts';

/** Sends a text message; resolves with the provider's id for it. */
export interface SmsProvider {
  send(input: { to: string; text: string }): Promise<{ id: string }>;
}

const E164 = /^\+[1-9]\d{6,14}$/;

function checkNumber(to: string): void {
  if (!E164.test(to)) throw new Error(`${to} is not an E.164 phone number (+ and 7 to 15 digits)`);
}

/**
 * The local provider: each SMS lands in the same SMTP inbox as the e-mails, addressed to `<digits>@<domain>`, so tests
 * and developers read codes where they read mail.
 */
export function createInboxSmsProvider(mailer: Mailer, options: { domain?: string } = {}): SmsProvider {
  const domain = options.domain ?? 'sms.sigil.local';
  return {
    async send({ to, text }) {
      checkNumber(to);
      const sent = await mailer.send({ to: `${to.slice(1)}@${domain}`, message: { kind: 'sms', subject: `SMS to ${to}`, text, html: '' } });
      return { id: sent.messageId };
    },
  };
}

export interface HttpSmsOptions {
  /** The provider's API base, e.g. https://api.twilio.com (a local fake in tests). */
  baseUrl: string;
  accountId: string;
  authToken: string;
  /** The sending number or sender id. */
  from: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** A Twilio-style REST API: `POST /2010-04-01/Accounts/{account}/Messages.json`, form-encoded, basic auth; 201 `{ sid }`. */
export function createHttpSmsProvider(options: HttpSmsOptions): SmsProvider {
  const doFetch = options.fetch ?? fetch;
  return {
    async send({ to, text }) {
      checkNumber(to);
      const url = new URL(`/2010-04-01/Accounts/${encodeURIComponent(options.accountId)}/Messages.json`, options.baseUrl);
      const response = await doFetch(url, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${options.accountId}:${options.authToken}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ To: to, From: options.from, Body: text }).toString(),
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      const body = (await response.json().catch(() => ({}))) as { sid?: string; message?: string };
      if (response.status !== 201 || !body.sid) throw new Error(`the SMS provider answered ${response.status}: ${body.message ?? 'no message'}`);
      return { id: body.sid };
    },
  };
}
