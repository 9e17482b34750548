import type { Transporter } from 'nodemailer';
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

/**
 * SMTP through nodemailer (the local stack's sink, or any server named by `url`). nodemailer (~18 MiB once loaded) is
 * loaded with the first message, not in every process that might send one.
 */
export function createMailer(options: { url: string; from: string }): Mailer {
  let transport: Promise<Transporter> | undefined;
  // The organization's display name replaces the name of `from`, never its address (`Sigil <no-reply@…>`).
  const fromAddress = /<([^<>]+)>\s*$/.exec(options.from)?.[1] ?? options.from.trim();
  const open = () => (transport ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(options.url)));
  return {
    async send({ to, message, attachments }) {
      const info = await (await open()).sendMail({
        from: message.fromName ? { name: message.fromName.replace(/[\r\n]+/g, ' '), address: fromAddress } : options.from,
        to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        headers: { 'X-Sigil-Kind': message.kind, 'Auto-Submitted': 'auto-generated' },
        attachments: attachments?.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })),
      });
      return { messageId: info.messageId };
    },
    close: () => void transport?.then((t) => t.close()),
  };
}
