import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCatalogHarness, generateAgeIdentity, type CatalogHarness } from './helpers.ts';
import { stackDocuments } from './fixtures.ts';

/**
 * `keepBackupObjects` (spec: default 20) bounds the Backup documents the declarative view shows per target; the
 * catalog keeps every backup, and the console API's list shows them all.
 */
let h: CatalogHarness;

async function backupRow(id: string, target: string, queuedAt: string) {
  await h.runtime.db.backup.create({
    data: { id, namespace: 'default', name: `${target}-${id}`, targetName: target, store: 'local', policy: 'nightly', engine: 'postgres', phase: 'Succeeded', queuedAt: new Date(queuedAt), completedAt: new Date(queuedAt) },
  });
}

beforeAll(async () => {
  h = await startCatalogHarness('keep_objects');
  const { recipient } = await generateAgeIdentity();
  const docs = stackDocuments({ bucket: 'strata-keep-objects', recipients: [recipient], postgres: { host: '127.0.0.1', port: 5432, username: 'postgres' }, mysql: { host: '127.0.0.1', port: 3306, username: 'root' } })
    .replace('spec:\n  store: local\n', 'spec:\n  store: local\n  keepBackupObjects: 2\n');
  expect((await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml')).status).toBe(200);
  for (const [i, day] of ['2026-11-20', '2026-11-21', '2026-11-22'].entries()) {
    await backupRow(`bk-pg-${i}`, 'postgres-main', `${day}T03:00:00Z`);
    await backupRow(`bk-my-${i}`, 'mysql-main', `${day}T04:00:00Z`);
  }
});
afterAll(async () => h?.close());

describe('keepBackupObjects', () => {
  it("shows each target's newest Backup documents up to its policy's keepBackupObjects; the API lists every backup", async () => {
    const docs = (await h.call('viewer', 'get', '/api/v1/resources?kind=Backup')).body.resources as Array<{ metadata: { name: string } }>;
    expect(docs.map((d) => d.metadata.name)).toEqual(['mysql-main-bk-my-2', 'postgres-main-bk-pg-2', 'mysql-main-bk-my-1', 'postgres-main-bk-pg-1']);
    const listed = (await h.call('viewer', 'get', '/api/v1/targets/default/postgres-main/backups')).body.backups as Array<{ id: string }>;
    expect(listed.map((b) => b.id)).toEqual(['bk-pg-2', 'bk-pg-1', 'bk-pg-0']);
  });
});
