import path from 'node:path';
import type { Express } from 'express';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { EntitlementsCache } from '@sigil/kit/entitlements';
import { createTestAuth, freshTestDatabase, silentLogger, type TestAuth } from '@sigil/kit/testing';
import type { TemplateVersionSnapshot } from '@sigil/proto/internal-templates';
import { createS3FileStore, type FileStore } from '@strata/stream/file-store';
import { testFileStoreOptions } from '@strata/stream/testing';
import type { BrandingCache } from '@sigil/kit/branding';
import { createMailer, type Mailer } from '@sigil/mail';
import { createApp } from '../src/app.ts';
import { createDb, type Db } from '../src/db.ts';
import type { Caller, TemplatesClient } from '../src/templates-client.ts';

export const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/envelopes/migrations');

/** A PDF of `pages` US-letter pages, each saying its number. */
export async function samplePdf(pages = 2): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) doc.addPage([612, 792]).drawText(`Agreement page ${i + 1}`, { x: 50, y: 740, size: 14, font });
  return Buffer.from(await doc.save());
}

/** A published version with two roles (client first, counsel second), a variable-bound text field and signatures. */
export function sampleVersion(templateId: string, version = 1, overrides: Partial<TemplateVersionSnapshot> = {}): TemplateVersionSnapshot {
  return {
    templateId,
    templateName: 'Services agreement',
    version,
    roles: [{ name: 'client', order: 1 }, { name: 'counsel', order: 2 }],
    fields: [
      { id: 'company', role: 'client', type: 'text', required: true, page: 1, x: 72, y: 100, width: 300, height: 24, variable: 'company' },
      { id: 'client_signature', role: 'client', type: 'signature', required: true, page: 2, x: 72, y: 600, width: 200, height: 40 },
      { id: 'counsel_signature', role: 'counsel', type: 'signature', required: true, page: 2, x: 320, y: 600, width: 200, height: 40 },
    ],
    variables: [{ name: 'company', required: true }, { name: 'note', required: false }],
    pageCount: 2,
    pages: [{ width: 612, height: 792 }, { width: 612, height: 792 }],
    sha256: '0'.repeat(64),
    publishedAt: new Date().toISOString(),
    ...overrides,
  };
}

/**
 * The templates service as envelopes calls it, in memory: published versions per organization, the uses recorded, and
 * a switch that makes every call fail (the service being down).
 */
export class FakeTemplates implements TemplatesClient {
  readonly versions = new Map<string, TemplateVersionSnapshot[]>();
  readonly uses: Array<{ organizationId: string; templateId: string; usedBy: { kind: string; id: string } }> = [];
  pdf: Buffer = Buffer.alloc(0);
  failDocuments = 0;

  publish(organizationId: string, snapshot: TemplateVersionSnapshot): void {
    const key = `${organizationId}/${snapshot.templateId}`;
    this.versions.set(key, [...(this.versions.get(key) ?? []), snapshot]);
  }

  async version(caller: Caller, templateId: string, version: number | 'latest') {
    const all = this.versions.get(`${caller.organizationId}/${templateId}`) ?? [];
    return version === 'latest' ? all.at(-1) : all.find((v) => v.version === version);
  }

  async use(caller: Caller, templateId: string, use: { version: number | 'latest'; usedBy: { kind: 'envelope' | 'signing_link'; id: string } }) {
    const found = await this.version(caller, templateId, use.version);
    if (found) this.uses.push({ organizationId: caller.organizationId, templateId, usedBy: use.usedBy });
    return found;
  }

  async document(_caller: Caller, _templateId: string, _version: number): Promise<Buffer> {
    if (this.failDocuments > 0) {
      this.failDocuments -= 1;
      throw new Error('templates service unavailable');
    }
    return this.pdf;
  }
}

export interface EnvelopesHarness {
  app: Express;
  db: Db;
  databaseUrl: string;
  auth: TestAuth;
  templates: FakeTemplates;
  store: FileStore;
  clock: { now: Date };
  mailer: Mailer;
  /** What e-mail needs (for the mail consumer's handler and the reminders in tests). */
  mail: { db: Db; mailer: Mailer; clock: () => Date; publicUrl: string; store: FileStore; branding?: Pick<BrandingCache, 'get'> };
  close(): Promise<void>;
}

export function testStore(): Promise<FileStore> {
  return createS3FileStore(testFileStoreOptions('sigil-envelopes-test'));
}

/** An envelopes app on a fresh database of its own; `name` keeps parallel test files apart. Time is `clock.now`. */
/** `branding`: the organizations' e-mail branding as e-mails and the link page read it (kit's cache over a fake accounts). */
export async function startEnvelopesHarness(name: string, options: { entitlements?: EntitlementsCache; linkRenderWaitMs?: number; branding?: Pick<BrandingCache, 'get'> } = {}): Promise<EnvelopesHarness> {
  const databaseUrl = await freshTestDatabase(`sigil_envelopes_test_${name}`, migrationsDir);
  const db = createDb(databaseUrl);
  const auth = await createTestAuth();
  const templates = new FakeTemplates();
  templates.pdf = await samplePdf(2);
  const store = await testStore();
  const clock = { now: new Date() };
  const mailer = createMailer({ url: process.env.SMTP_URL ?? 'smtp://127.0.0.1:2525', from: 'Sigil <no-reply@sigil.local>' });
  const publicUrl = 'https://sign.example.test';
  const { app } = await createApp({ db, log: silentLogger(), verifyPrincipal: auth.verify, templates, entitlements: options.entitlements, store, clock: () => clock.now, mail: { mailer, publicUrl, branding: options.branding }, linkRenderWaitMs: options.linkRenderWaitMs ?? 0 });
  const mail = { db, mailer, clock: () => clock.now, publicUrl, store, branding: options.branding };
  return {
    app, db, databaseUrl, auth, templates, store, clock, mailer, mail,
    close: async () => {
      mailer.close();
      await db.$disconnect();
    },
  };
}
