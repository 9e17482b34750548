import path from 'node:path';
import type { Express } from 'express';
import { AppError } from '@sigil/kit/errors';
import { sha256Hex } from '@sigil/kit/crypto';
import { createTestAuth, freshTestDatabase, silentLogger, type TestAuth } from '@sigil/kit/testing';
import type { ExchangedSession, SignerOutcome, SignerView, SubmitValues } from '@sigil/proto/internal-envelopes';
import { createS3FileStore, type FileStore } from '@strata/stream/file-store';
import { testFileStoreOptions } from '@strata/stream/testing';
import type { Mailer, Message, SmsProvider } from '@sigil/mail';
import type { BrandingCache } from '@sigil/kit/branding';
import { createApp } from '../src/app.ts';
import { createDb, type Db } from '../src/db.ts';
import type { Actor, EnvelopesClient, SignerRef } from '../src/envelopes-client.ts';

export const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/signing/migrations');

/**
 * The envelopes service as signing calls it, in memory: session tokens by hash (spent once), one recipient's view, and
 * every call recorded. `verification` and `yourTurn` can be changed per test.
 */
export class FakeEnvelopes implements EnvelopesClient {
  readonly sessions = new Map<string, ExchangedSession>();
  readonly calls: Array<{ call: string; signer?: SignerRef; body?: unknown }> = [];
  verification: 'none' | 'email' | 'sms' = 'none';
  phone: string | null = null;
  member = true;
  status = 'sent';
  yourTurn = true;
  pdf = Buffer.from('%PDF-1.7 fake');

  addSession(token: string, session: ExchangedSession): void {
    this.sessions.set(sha256Hex(token), session);
  }

  async exchange(tokenHash: string) {
    const session = this.sessions.get(tokenHash);
    this.sessions.delete(tokenHash);
    this.calls.push({ call: 'exchange' });
    return session;
  }

  async view(signer: SignerRef): Promise<SignerView> {
    this.calls.push({ call: 'view', signer });
    return {
      envelope: { id: signer.envelopeId, status: 'sent', testMode: signer.testMode, title: 'NDA', organizationId: signer.organizationId, organizationName: 'Acme', expiresAt: new Date(Date.now() + 86_400_000).toISOString(), pageCount: 1, pages: [{ width: 612, height: 792 }] },
      recipient: { id: signer.recipientId, role: 'client', name: 'Ada', email: 'ada@example.com', phone: this.phone, status: this.status, verification: this.verification, delivery: 'email', member: this.member },
      yourTurn: this.yourTurn,
      fields: [
        { id: 'sig', role: 'client', type: 'signature', required: true, page: 1, x: 72, y: 600, width: 200, height: 40, readOnly: false, value: null },
        { id: 'id_scan', role: 'client', type: 'attachment', required: false, page: 1, x: 72, y: 660, width: 200, height: 20, readOnly: false, value: null },
        { id: 'counsel_scan', role: 'counsel', type: 'attachment', required: false, page: 1, x: 300, y: 660, width: 200, height: 20, readOnly: true, value: null },
      ],
    };
  }

  async document(signer: SignerRef) {
    this.calls.push({ call: 'document', signer });
    return this.pdf;
  }

  async viewed(signer: SignerRef, actor: Actor) {
    this.calls.push({ call: 'viewed', signer, body: actor });
    this.status = 'viewed';
  }

  async submit(signer: SignerRef, values: SubmitValues): Promise<SignerOutcome> {
    this.calls.push({ call: 'submit', signer, body: values });
    if (this.status === 'completed') throw new AppError('conflict', 'already signed');
    this.status = 'completed';
    return { recipientStatus: 'completed', envelopeStatus: 'completed' };
  }

  async decline(signer: SignerRef, reason: string | null, actor: Actor): Promise<SignerOutcome> {
    this.calls.push({ call: 'decline', signer, body: { reason, ...actor } });
    this.status = 'declined';
    return { recipientStatus: 'declined', envelopeStatus: 'declined' };
  }
}

/** E-mails and text messages as sent, for reading one-time codes (the mail package is tested on the real sink). */
export class Outbox implements Mailer, SmsProvider {
  readonly mails: Array<{ to: string; message: Message }> = [];
  readonly texts: Array<{ to: string; text: string }> = [];
  async send(input: { to: string; message: Message } | { to: string; text: string }) {
    if ('message' in input) this.mails.push(input);
    else this.texts.push(input);
    return { messageId: `<${this.mails.length + this.texts.length}@test>`, id: `SM${this.texts.length}` };
  }
  close(): void {}
  /** The last code sent, by whichever channel. */
  lastCode(): string | undefined {
    const last = [...this.mails.map((m) => m.message.text), ...this.texts.map((t) => t.text)].at(-1);
    return /\b(\d{6})\b/.exec(last ?? '')?.[1];
  }
}

export interface SigningHarness {
  app: Express;
  db: Db;
  auth: TestAuth;
  envelopes: FakeEnvelopes;
  store: FileStore;
  outbox: Outbox;
  clock: { now: Date };
  close(): Promise<void>;
}

/** `branding`: the organizations' e-mail branding as the app reads it (kit's cache over a fake accounts). */
export async function startSigningHarness(name: string, options: { branding?: Pick<BrandingCache, 'get'> } = {}): Promise<SigningHarness> {
  const databaseUrl = await freshTestDatabase(`sigil_signing_test_${name}`, migrationsDir);
  const db = createDb(databaseUrl);
  const auth = await createTestAuth();
  const envelopes = new FakeEnvelopes();
  const clock = { now: new Date() };
  const outbox = new Outbox();
  const store = await createS3FileStore(testFileStoreOptions('sigil-attachments-test'));
  const { app } = await createApp({ db, log: silentLogger(), verifyPrincipal: auth.verify, envelopes, clock: () => clock.now, accessTokenTtlSeconds: 1800, store, attachmentMaxBytes: 64 * 1024, mailer: outbox, sms: outbox, branding: options.branding });
  return { app, db, auth, envelopes, store, outbox, clock, close: () => db.$disconnect() };
}
