import path from 'node:path';
import type { Express } from 'express';
import { createTestAuth, freshTestDatabase, silentLogger, type TestAuth } from '@sigil/kit/testing';
import { createApp } from '../src/app.ts';
import { createDb, type Db } from '../src/db.ts';

export const migrationsDir = path.resolve(import.meta.dirname, '../../../prisma/templates/migrations');

export interface TemplatesHarness {
  app: Express;
  db: Db;
  auth: TestAuth;
  databaseUrl: string;
  close(): Promise<void>;
}

/** A templates app on its own fresh database; `name` keeps parallel test files apart. */
export async function startTemplatesHarness(name: string): Promise<TemplatesHarness> {
  const databaseUrl = await freshTestDatabase(`sigil_templates_test_${name}`, migrationsDir);
  const db = createDb(databaseUrl);
  const auth = await createTestAuth();
  const { app } = await createApp({ db, log: silentLogger(), verifyPrincipal: auth.verify });
  return { app, db, auth, databaseUrl, close: () => db.$disconnect() };
}
