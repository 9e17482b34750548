import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmtpSink, waitForMessage } from '../src/index.ts';
import type { SinkMessage, SmtpSink } from '../src/index.ts';
import { removeDir, tempStateDir } from './helpers.ts';

describe('createSmtpSink', () => {
  let sink: SmtpSink | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await sink?.stop();
    sink = undefined;
    removeDir(dir);
    dir = undefined;
  });

  it('keeps every mail, serves it over the inbox API and writes .eml files', async () => {
    dir = tempStateDir();
    sink = await createSmtpSink({ dir: path.join(dir, 'mail') });
    expect(sink.host).toBe('127.0.0.1');
    expect(sink.inboxUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const transport = nodemailer.createTransport({ host: sink.host, port: sink.port, secure: false, ignoreTLS: true });
    await transport.sendMail({
      from: 'Sigil <no-reply@sigil.test>',
      to: 'alice@example.com',
      subject: 'First',
      text: 'hello alice',
      html: '<p>hello alice</p>',
      attachments: [{ filename: 'a.txt', content: 'attached' }],
    });
    await transport.sendMail({
      from: 'no-reply@sigil.test',
      to: 'bob@example.com',
      bcc: 'carol@example.com',
      subject: 'Second',
      text: 'hello bob',
    });
    // Credentials are accepted, so a service configured for a real relay works unchanged.
    const withAuth = nodemailer.createTransport({
      host: sink.host,
      port: sink.port,
      secure: false,
      ignoreTLS: true,
      auth: { user: 'someone', pass: 'secret' },
    });
    await withAuth.sendMail({ from: 'x@sigil.test', to: 'dave@example.com', subject: 'Third', text: 'hi' });
    transport.close();
    withAuth.close();

    const all = (await (await fetch(`${sink.inboxUrl}/messages`)).json()) as SinkMessage[];
    expect(all.map((m) => m.subject)).toEqual(['Third', 'Second', 'First']);
    const first = all[2] as SinkMessage;
    expect(first).toMatchObject({ from: 'no-reply@sigil.test', to: ['alice@example.com'], subject: 'First' });
    expect(first.text.trim()).toBe('hello alice');
    expect(first.html).toContain('<p>hello alice</p>');
    expect(first.attachments).toEqual([{ filename: 'a.txt', contentType: 'text/plain', size: 8 }]);
    expect(Number.isNaN(Date.parse(first.date))).toBe(false);

    const forCarol = (await (await fetch(`${sink.inboxUrl}/messages?to=CAROL@example.com`)).json()) as SinkMessage[];
    expect(forCarol.map((m) => m.subject)).toEqual(['Second']);

    const one = await fetch(`${sink.inboxUrl}/messages/${first.id}`);
    expect(one.status).toBe(200);
    expect(((await one.json()) as SinkMessage).id).toBe(first.id);

    const raw = await fetch(`${sink.inboxUrl}/messages/${first.id}/raw`);
    expect(raw.headers.get('content-type')).toBe('message/rfc822');
    const rawText = await raw.text();
    expect(rawText).toContain('Subject: First');
    expect(fs.readFileSync(path.join(dir, 'mail', `${first.id}.eml`), 'utf8')).toBe(rawText);

    expect((await fetch(`${sink.inboxUrl}/messages/nope`)).status).toBe(404);
    expect((await waitForMessage(sink.inboxUrl, { to: 'bob@example.com', subject: /Sec/ })).subject).toBe('Second');

    expect((await fetch(`${sink.inboxUrl}/messages`, { method: 'DELETE' })).status).toBe(204);
    expect(await (await fetch(`${sink.inboxUrl}/messages`)).json()).toEqual([]);
  });

  it('keeps only the newest maxMessages in memory', async () => {
    sink = await createSmtpSink({ maxMessages: 2 });
    const transport = nodemailer.createTransport({ host: sink.host, port: sink.port, secure: false, ignoreTLS: true });
    for (const subject of ['one', 'two', 'three']) {
      await transport.sendMail({ from: 'a@sigil.test', to: 'b@sigil.test', subject, text: subject });
    }
    transport.close();
    expect(sink.messages().map((m) => m.subject)).toEqual(['three', 'two']);
    const raw = await fetch(`${sink.inboxUrl}/messages/${sink.messages()[0]?.id}/raw`);
    expect(await raw.text()).toContain('Subject: three');
  });
});
