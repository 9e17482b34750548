import type { Express } from 'express';
import { createTestAuth, freshTestDatabase, silentLogger, testPlanEntitlements, type TestPlan } from '@sigil/kit/testing';
import { createEntitlementsCache, type EntitlementsCache } from '@sigil/kit/entitlements';
import { createS3FileStore, type FileStore } from '@strata/stream/file-store';
import { testFileStoreOptions } from '@strata/stream/testing';
import { createApp } from '../src/app.ts';
import { createDb } from '../src/db.ts';
import { cheapPasswords, migrationsDir, type Harness } from './helpers.ts';

export const PUBLIC_URL = 'https://sigil.example.test';

export interface BrandingHarness extends Harness {
  /** Organizations whose plan also has `whiteLabel` (Platform's), on top of `plans`. */
  whiteLabel: Set<string>;
  /** The organizations whose branding change was notified, in order. */
  notified: string[];
  store: FileStore;
  entitlements: EntitlementsCache;
}

/** The accounts app with the stack's S3 for logos and a plan table that can add white-label (Platform). */
export async function createBrandingHarness(name: string): Promise<BrandingHarness> {
  const url = await freshTestDatabase(`sigil_accounts_test_${name}`, migrationsDir);
  const db = createDb(url);
  const auth = await createTestAuth();
  const plans = new Map<string, TestPlan>();
  const whiteLabel = new Set<string>();
  const entitlements = await createEntitlementsCache({
    ttlMs: 0,
    source: async (organizationId) => {
      const answer = testPlanEntitlements(organizationId, plans.get(organizationId) ?? 'free');
      return whiteLabel.has(organizationId) ? { ...answer, plan: 'platform', planName: 'Platform', features: { ...answer.features, whiteLabel: true } } : answer;
    },
  });
  const store = await createS3FileStore(testFileStoreOptions('sigil-logos-test'));
  const notified: string[] = [];
  const { app }: { app: Express } = await createApp({
    db,
    log: silentLogger(),
    verifyPrincipal: auth.verify,
    passwords: cheapPasswords,
    entitlements,
    publicUrl: PUBLIC_URL,
    logoStore: store,
    notifyBrandingChanged: (organizationId) => void notified.push(organizationId),
  });
  return { app, db, databaseUrl: url, auth, plans, whiteLabel, notified, store, entitlements, close: () => db.$disconnect() };
}
