import { expect } from 'vitest';
import { startCatalogHarness, type CatalogHarness } from '@strata/backup-catalog/testing';
import { waitFor } from './wait.ts';

/**
 * The catalog database lost: a fresh catalog given the same resources mirrors the store and must know again every
 * finished, unexpired segment the running one had recorded a while ago (same positions, times and checksums) and show the same
 * start of the change-capture window.
 */
export async function expectChangeLogRebuilt(h: CatalogHarness, docs: string, target: string, minimumSegments: number): Promise<void> {
  const settled = new Date(Date.now() - 5_000);
  // Expired segments are left out: no chain uses them and garbage collection deletes their objects on purpose, so
  // whether one comes back depends only on whether a collection ran before the database was lost.
  const original = await h.runtime.db.segment.findMany({ where: { uploadedAt: { lt: settled }, partial: false, expired: false }, orderBy: { startLsn: 'asc' } });
  expect(original.length).toBeGreaterThanOrEqual(minimumSegments);
  const window = (await h.call('viewer', 'get', `/api/v1/targets/${target}`)).body.target.windows[0];
  const fresh = await startCatalogHarness(`rebuilt_${target.replace(/\W/g, '_')}`, { secretsKey: h.secretsKey });
  try {
    const applied = await fresh.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    await fresh.runtime.mirror();
    const rebuilt = new Map((await fresh.runtime.db.segment.findMany()).map((row) => [row.key, row]));
    const fields = ({ key, chainId, timeline, name, startPos, endPos, firstTime, lastTime, commits, sha256, size, rawSize, partial, uploadedAt }: (typeof original)[number]) =>
      ({ key, chainId, timeline, name, startPos, endPos, firstTime, lastTime, commits, sha256, size, rawSize, partial, uploadedAt });
    const lost = original.filter((row) => !rebuilt.has(row.key));
    // What a failure needs to be understood: the rows not brought back, and what the fresh catalog's pass said of the store.
    if (lost.length) {
      const stores = (await fresh.call('viewer', 'get', '/api/v1/resources?kind=BackupStore')).body;
      expect.fail(`not brought back: ${JSON.stringify(lost.map(({ key, uploadedAt, missing, expired }) => ({ key, uploadedAt, missing, expired })))}; rebuilt ${rebuilt.size} of ${original.length}; stores: ${JSON.stringify(stores).slice(0, 1500)}`);
    }
    for (const row of original) expect(fields(rebuilt.get(row.key)!)).toEqual(fields(row));
    const view = await waitFor('the rebuilt window', async () => {
      const t = (await fresh.call('viewer', 'get', `/api/v1/targets/${target}`)).body.target;
      return t.windows?.length ? t : undefined;
    }, 30_000);
    expect(view.windows[0].from).toBe(window.from);
  } finally {
    await fresh.close();
  }
}
