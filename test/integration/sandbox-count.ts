import { expect } from 'vitest';
import type { CatalogHarness } from '@strata/backup-catalog/testing';
import { serve, startSandboxHarness } from '@strata/sandbox/testing';

/**
 * Opens a sandbox of `target` (at `request`'s moment) through a sandbox service of its own beside the catalog harness,
 * waits until it is Ready, and answers `count(*)` and `max(id)` of its `events` table as the query API gives them.
 */
export async function countInSandbox(h: CatalogHarness, name: string, target: string, request: { at: string }): Promise<{ sandbox: Record<string, unknown>; rows: unknown }> {
  const catalog = await serve(h.app);
  const s = await startSandboxHarness({ name, auth: h.auth, catalogUrl: catalog.url, cell: h.cell, secretsKey: h.secretsKey });
  try {
    const res = await s.call('restorer', 'post', '/api/v1/sandboxes', { target, mode: 'sandbox', ...request });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const sandbox = await s.untilPhase(res.body.name, ['Ready', 'Failed'], 300_000);
    expect(sandbox.phase, sandbox.message).toBe('Ready');
    const counted = await s.call('restorer', 'post', `/api/v1/sandboxes/${sandbox.name}/query`, { sql: 'SELECT count(*) AS n, max(id) AS last FROM events' });
    expect(counted.status, JSON.stringify(counted.body)).toBe(200);
    return { sandbox, rows: counted.body.rows };
  } finally {
    await s.close();
    await catalog.close();
  }
}
