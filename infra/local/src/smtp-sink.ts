import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import type { AddressObject } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { errorMessage, LOOPBACK, sleep } from './net.ts';

/** One received mail as the inbox API returns it. */
export interface SinkMessage {
  id: string;
  /** Address of the From header (the envelope sender when there is none). */
  from: string;
  /** Envelope recipients: everyone the mail was delivered to, Cc and Bcc included. */
  to: string[];
  subject: string;
  text: string;
  html: string | null;
  /** The Date header, or the time of receipt (ISO 8601). */
  date: string;
  receivedAt: string;
  attachments: Array<{ filename: string | null; contentType: string; size: number }>;
}

export interface SmtpSinkOptions {
  /** Where to write each mail as <id>.eml; when absent mails live in memory only. */
  dir?: string;
  log?: (line: string) => void;
  /** SMTP port; 0 (default) lets the kernel pick. */
  port?: number;
  /** Inbox HTTP API port; 0 (default) lets the kernel pick. */
  inboxPort?: number;
  /** How many messages to keep in memory (default 1000, oldest dropped first). */
  maxMessages?: number;
}

export interface SmtpSink {
  host: string;
  port: number;
  /** Base URL of the inbox API, e.g. http://127.0.0.1:PORT (then GET /messages). */
  inboxUrl: string;
  messages(): SinkMessage[];
  clear(): void;
  stop(): Promise<void>;
}

interface Stored {
  message: SinkMessage;
  raw: Buffer | undefined;
  file: string | undefined;
}

const MAX_MESSAGE_BYTES = 50 * 1024 * 1024;

function addresses(value: AddressObject | AddressObject[] | undefined): string[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const obj of list) {
    for (const entry of obj.value) {
      if (entry.address) out.push(entry.address);
      for (const member of entry.group ?? []) if (member.address) out.push(member.address);
    }
  }
  return out;
}

function newId(): string {
  return `${Date.now().toString(36).padStart(9, '0')}-${randomBytes(4).toString('hex')}`;
}

async function listen(server: { listen(port: number, host: string, cb: () => void): unknown; once(event: 'error', cb: (e: Error) => void): unknown; removeListener(event: 'error', cb: (e: Error) => void): unknown }, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, LOOPBACK, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

/** An SMTP server that accepts every mail and an HTTP API to read what it received. */
export async function createSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const log = options.log ?? (() => {});
  const maxMessages = options.maxMessages ?? 1000;
  const dir = options.dir;
  if (dir) fs.mkdirSync(dir, { recursive: true });
  let stored: Stored[] = []; // newest first

  async function receive(raw: Buffer, envelopeFrom: string, rcpt: string[]): Promise<SinkMessage> {
    const id = newId();
    const receivedAt = new Date().toISOString();
    let message: SinkMessage;
    try {
      const parsed = await simpleParser(raw, { skipImageLinks: true });
      message = {
        id,
        from: addresses(parsed.from)[0] ?? envelopeFrom,
        to: rcpt.length > 0 ? rcpt : addresses(parsed.to),
        subject: parsed.subject ?? '',
        text: parsed.text ?? '',
        html: typeof parsed.html === 'string' ? parsed.html : null,
        date: parsed.date ? parsed.date.toISOString() : receivedAt,
        receivedAt,
        attachments: parsed.attachments.map((a) => ({
          filename: a.filename ?? null,
          contentType: a.contentType,
          size: a.size,
        })),
      };
    } catch (error) {
      log(`smtp: could not parse a mail (${errorMessage(error)}); kept raw`);
      message = { id, from: envelopeFrom, to: rcpt, subject: '', text: '', html: null, date: receivedAt, receivedAt, attachments: [] };
    }
    let file: string | undefined;
    if (dir) {
      file = path.join(dir, `${id}.eml`);
      await fs.promises.writeFile(file, raw);
    }
    stored.unshift({ message, raw: file ? undefined : raw, file });
    if (stored.length > maxMessages) stored.length = maxMessages;
    log(`smtp: mail ${id} from ${message.from} to ${message.to.join(', ')}: ${message.subject}`);
    return message;
  }

  const smtp = new SMTPServer({
    secure: false,
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    hideSTARTTLS: true,
    logger: false,
    size: MAX_MESSAGE_BYTES,
    banner: 'Sigil local SMTP sink',
    closeTimeout: 1000,
    // Accept any credentials, so services configured for a real relay work unchanged.
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? 'local' });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.once('error', (error) => callback(error));
      stream.once('end', () => {
        if (stream.sizeExceeded) {
          const error = Object.assign(new Error('Message exceeds the size limit'), { responseCode: 552 });
          callback(error);
          return;
        }
        const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const rcpt = session.envelope.rcptTo.map((r) => r.address);
        receive(Buffer.concat(chunks), envelopeFrom, rcpt).then(
          (message) => callback(null, `Queued as ${message.id}`),
          (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
        );
      });
    },
  });
  smtp.on('error', (error) => log(`smtp: ${errorMessage(error)}`));

  const find = (id: string): Stored | undefined => stored.find((s) => s.message.id === id);
  const send = (res: http.ServerResponse, status: number, body: unknown): void => {
    const json = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'access-control-allow-origin': '*' });
    res.end(json);
  };

  const inbox = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://inbox');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const method = req.method ?? 'GET';
    void (async () => {
      if (method === 'OPTIONS') {
        res.writeHead(204, {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'GET, DELETE, OPTIONS',
          'access-control-allow-headers': '*',
        });
        res.end();
        return;
      }
      if (parts[0] !== 'messages' || parts.length > 3) {
        if (parts.length === 0 && method === 'GET') return send(res, 200, { messages: `/messages` });
        return send(res, 404, { error: 'not found' });
      }
      const id = parts[1];
      if (id === undefined) {
        if (method === 'GET') {
          const to = url.searchParams.get('to')?.toLowerCase();
          const limit = Number(url.searchParams.get('limit') ?? '') || undefined;
          let list = stored.map((s) => s.message);
          if (to) list = list.filter((m) => m.to.some((a) => a.toLowerCase() === to));
          return send(res, 200, limit ? list.slice(0, limit) : list);
        }
        if (method === 'DELETE') {
          stored = [];
          res.writeHead(204, { 'access-control-allow-origin': '*' });
          res.end();
          return;
        }
        return send(res, 405, { error: 'method not allowed' });
      }
      const entry = find(id);
      if (!entry) return send(res, 404, { error: `no message ${id}` });
      if (parts[2] === 'raw' && method === 'GET') {
        const raw = entry.raw ?? (entry.file ? await fs.promises.readFile(entry.file) : Buffer.alloc(0));
        res.writeHead(200, { 'content-type': 'message/rfc822', 'access-control-allow-origin': '*' });
        res.end(raw);
        return;
      }
      if (parts[2] !== undefined) return send(res, 404, { error: 'not found' });
      if (method === 'GET') return send(res, 200, entry.message);
      if (method === 'DELETE') {
        stored = stored.filter((s) => s !== entry);
        res.writeHead(204, { 'access-control-allow-origin': '*' });
        res.end();
        return;
      }
      return send(res, 405, { error: 'method not allowed' });
    })().catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, { error: errorMessage(error) });
      else res.destroy();
    });
  });

  await listen(smtp.server, options.port ?? 0);
  try {
    await listen(inbox, options.inboxPort ?? 0);
  } catch (error) {
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    throw error;
  }
  const smtpAddress = smtp.server.address();
  const inboxAddress = inbox.address();
  const port = typeof smtpAddress === 'object' && smtpAddress ? smtpAddress.port : 0;
  const inboxPort = typeof inboxAddress === 'object' && inboxAddress ? inboxAddress.port : 0;
  const inboxUrl = `http://${LOOPBACK}:${inboxPort}`;

  let stopping: Promise<void> | undefined;
  return {
    host: LOOPBACK,
    port,
    inboxUrl,
    messages: () => stored.map((s) => s.message),
    clear: () => {
      stored = [];
    },
    stop: () => {
      stopping ??= (async () => {
        const closeInbox = new Promise<void>((resolve) => inbox.close(() => resolve()));
        inbox.closeAllConnections();
        await Promise.all([new Promise<void>((resolve) => smtp.close(() => resolve())), closeInbox]);
      })();
      return stopping;
    },
  };
}

/** Poll an inbox API until a message matching the filter arrives (newest first); throws after timeoutMs. */
export async function waitForMessage(
  inboxUrl: string,
  filter: { to?: string; subject?: string | RegExp; timeoutMs?: number } = {},
): Promise<SinkMessage> {
  const deadline = Date.now() + (filter.timeoutMs ?? 10_000);
  const query = filter.to ? `?to=${encodeURIComponent(filter.to)}` : '';
  for (;;) {
    const response = await fetch(`${inboxUrl}/messages${query}`);
    const list = (await response.json()) as SinkMessage[];
    const match = list.find((m) =>
      filter.subject === undefined
        ? true
        : typeof filter.subject === 'string'
          ? m.subject === filter.subject
          : filter.subject.test(m.subject),
    );
    if (match) return match;
    if (Date.now() > deadline) {
      throw new Error(`no mail${filter.to ? ` to ${filter.to}` : ''}${filter.subject ? ` with subject ${String(filter.subject)}` : ''} arrived in ${filter.timeoutMs ?? 10_000} ms`);
    }
    await sleep(100);
  }
}
