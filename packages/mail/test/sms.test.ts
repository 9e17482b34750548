import { createServer, type IncomingMessage } from 'node:http';
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpSmsProvider, createInboxSmsProvider, createMailer } from '../src/index.ts';

/** A local stand-in for a Twilio-style API: checks what it is sent, answers like the real one. */
let received: Array<{ method: string; path: string; auth: string; form: URLSearchParams }> = [];
let answer: { status: number; body: unknown; delayMs?: number } = { status: 201, body: { sid: 'SM123' } };
const server = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    received.push({ method: req.method ?? '', path: req.url ?? '', auth: req.headers.authorization ?? '', form: new URLSearchParams(body) });
    setTimeout(() => {
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    }, answer.delayMs ?? 0);
  });
});
let baseUrl: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => void server.close());

describe('createHttpSmsProvider', () => {
  const provider = () => createHttpSmsProvider({ baseUrl, accountId: 'AC42', authToken: 'secret', from: '+15550001111', timeoutMs: 300 });

  it('posts the form with basic auth and answers the message id', async () => {
    received = [];
    answer = { status: 201, body: { sid: 'SM123' } };
    expect(await provider().send({ to: '+447700900123', text: 'Your code is 123456' })).toEqual({ id: 'SM123' });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'POST', path: '/2010-04-01/Accounts/AC42/Messages.json', auth: `Basic ${Buffer.from('AC42:secret').toString('base64')}` });
    expect(Object.fromEntries(received[0]!.form)).toEqual({ To: '+447700900123', From: '+15550001111', Body: 'Your code is 123456' });
  });

  it("fails with the provider's message, on a timeout, and for a number that is not E.164", async () => {
    answer = { status: 400, body: { message: "The 'To' number is not a valid phone number." } };
    await expect(provider().send({ to: '+447700900123', text: 'x' })).rejects.toThrow(/400: The 'To' number/);
    answer = { status: 201, body: { sid: 'SM1' }, delayMs: 1000 };
    await expect(provider().send({ to: '+447700900123', text: 'x' })).rejects.toThrow();
    await expect(provider().send({ to: '07700 900123', text: 'x' })).rejects.toThrow(/E.164/);
  });
});

describe('createInboxSmsProvider', () => {
  it('drops the text in the SMTP inbox, addressed to the number', async () => {
    const mailer = createMailer({ url: process.env.SMTP_URL as string, from: 'Sigil <no-reply@sigil.local>' });
    const number = `+1555${randomInt(1_000_000, 9_999_999)}`;
    await createInboxSmsProvider(mailer).send({ to: number, text: 'Your code is 654321' });
    mailer.close();
    let found: { subject: string; text: string } | undefined;
    for (let i = 0; i < 200 && !found; i++) {
      const messages = (await (await fetch(`${process.env.SMTP_INBOX_URL}/messages`)).json()) as Array<{ to: string[]; subject: string; text: string }>;
      found = messages.find((m) => m.to.includes(`${number.slice(1)}@sms.sigil.local`));
      if (!found) await new Promise((resolve) => setTimeout(resolve, 30));
    }
    expect(found).toMatchObject({ subject: `SMS to ${number}` });
    expect(found!.text.trim()).toBe('Your code is 654321');
  });
});
