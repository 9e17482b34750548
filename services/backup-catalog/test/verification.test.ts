import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '@sigil/kit/testing';
import { createVerifier } from '../src/restores/verification.ts';
import { postgresTarget, startOfflineCatalog, type CatalogHarness } from './helpers.ts';

/** Scheduled verifications on the offline store (no mover): what a pass records when the chain cannot be read. */
let h: CatalogHarness;

beforeAll(async () => {
  h = await startOfflineCatalog('verification', [
    `apiVersion: backups.strata.dev/v1alpha1
kind: BackupPolicy
metadata: { name: verified }
spec:
  store: local
  full: { schedule: "0 3 * * *" }
  verify: { schedule: "* * * * *", randomPointInTime: true }`,
    postgresTarget('first', 'verified'),
    postgresTarget('second', 'verified'),
  ]);
});
afterAll(async () => h?.close());

describe('a verification pass', () => {
  it('records every due slot and logs the target whose chain cannot be read, verifying its latest backup instead', async () => {
    const log = silentLogger();
    const warnings = vi.spyOn(log, 'warn');
    const verifier = createVerifier({ ...h.runtime.deps, log });
    const now = new Date(Date.now() + 5 * 60_000);
    // A statement that fails for real: the chain's table is away for the pass.
    await h.runtime.db.$executeRawUnsafe('ALTER TABLE segments RENAME TO segments_away');
    try {
      await expect(verifier.tick(now)).resolves.toBe(0);
    } finally {
      await h.runtime.db.$executeRawUnsafe('ALTER TABLE segments_away RENAME TO segments');
    }
    for (const name of ['first', 'second']) {
      const res = await h.call('viewer', 'get', `/api/v1/targets/default/${name}`);
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).toContain('"lastVerifyScheduleTime"');
      expect(warnings).toHaveBeenCalledWith(
        expect.objectContaining({ target: `default/${name}`, err: expect.objectContaining({ message: expect.stringContaining('segments') }) }),
        'the change-capture chain could not be read; verifying the latest backup',
      );
    }
  });
});
