import path from 'node:path';
import type { Express } from 'express';
import { createTestAuth, freshTestDatabase, silentLogger, type TestAuth } from '@sigil/kit/testing';
import { createApp } from '../src/app.ts';
import { createDb, type Db } from '../src/db.ts';
import { createOfficeConverter, type OfficeConverter } from '../src/files/office-convert.ts';
import { testFileStoreOptions } from '@strata/stream/testing';
import { createS3FileStore, type FileStore } from '../src/files/storage.ts';
import { createBodyPrinter } from '../src/versions/print-body.ts';

export const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/templates/migrations');

export interface TemplatesHarness {
  app: Express;
  db: Db;
  auth: TestAuth;
  databaseUrl: string;
  store: FileStore;
  close(): Promise<void>;
}

export interface HarnessOptions {
  maxBytes?: number;
  maxPages?: number;
  converter?: OfficeConverter;
}

/** The tests' S3 (started by test/setup/global-setup.ts), one bucket for all template tests. */
export function testFileStore(): Promise<FileStore> {
  return createS3FileStore(testFileStoreOptions('sigil-templates-test'));
}

/** A templates app on its own fresh database; `name` keeps parallel test files apart. */
export async function startTemplatesHarness(name: string, options: HarnessOptions = {}): Promise<TemplatesHarness> {
  const databaseUrl = await freshTestDatabase(`sigil_templates_test_${name}`, migrationsDir);
  const db = createDb(databaseUrl);
  const auth = await createTestAuth();
  const store = await testFileStore();
  const converter = options.converter ?? createOfficeConverter({ workers: 2, timeoutMs: 120_000 });
  const printer = createBodyPrinter();
  const files = { store, converter, printer, maxBytes: options.maxBytes ?? 25 * 1024 * 1024, maxPages: options.maxPages ?? 500 };
  const { app } = await createApp({ db, log: silentLogger(), verifyPrincipal: auth.verify, files });
  return {
    app,
    db,
    auth,
    databaseUrl,
    store,
    close: async () => {
      await converter.close();
      await printer.close();
      await db.$disconnect();
    },
  };
}
