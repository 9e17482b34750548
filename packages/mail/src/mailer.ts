import nodemailer from 'nodemailer';
import type { Message } from './messages.ts';

/** A file sent with a message (the completed document, say). */
export interface Attachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

export interface Mailer {
  /** Sends one message; resolves with the server's message id, rejects when the server refuses it. */
  send(input: { to: string; message: Message; attachments?: Attachment[] }): Promise<{ messageId: string }>;
  close(): void;
}

/** SMTP through nodemailer (the local stack's sink, or any server named by `url`). */
export function createMailer(options: { url: string; from: string }): Mailer {
  const transport = nodemailer.createTransport(options.url);
  return {
    async send({ to, message, attachments }) {
      const info = await transport.sendMail({
        from: options.from,
        to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        headers: { 'X-Sigil-Kind': message.kind, 'Auto-Submitted': 'auto-generated' },
        attachments: attachments?.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })),
      });
      return { messageId: info.messageId };
    },
    close: () => transport.close(),
  };
}
