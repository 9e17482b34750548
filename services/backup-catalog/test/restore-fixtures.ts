/**
 * A catalog for the tests of what the console reads about restores: the test S3 store (restores plan and sign against
 * it), two Postgres targets of different orgs and projects, and logical full backups of both, without change capture.
 * The targets' servers answer nothing (port 9): no check of the catalog reaches a database, and no mover runs.
 */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { expect } from 'vitest';
import type { StrataPrincipal, StrataRole } from '@sigil/proto/strata';
import { generateAgeIdentity, startCatalogHarness, type CatalogHarness } from './helpers.ts';
import { stackDocuments } from './fixtures.ts';

export const MAIN = { namespace: 'default', name: 'postgres-main' };
/** Labelled org globex, project books (postgres-main: org acme, no project). */
export const LEDGER = { namespace: 'default', name: 'ledger' };

/** Two fulls of postgres-main two days apart, and one of ledger; `time` is each one's consistent moment. */
export const MAIN_OLDER = { id: 'bk-main-older', target: MAIN.name, time: '2026-11-20T03:04:00.000Z', storedBytes: 1_200_000 };
export const MAIN_NEWER = { id: 'bk-main-newer', target: MAIN.name, time: '2026-11-22T03:04:00.000Z', storedBytes: 1_300_000 };
export const LEDGER_FULL = { id: 'bk-ledger', target: LEDGER.name, time: '2026-11-21T03:04:00.000Z', storedBytes: 900_000 };

const ledgerDoc = `apiVersion: backups.strata.dev/v1alpha1
kind: BackupTarget
metadata:
  name: ${LEDGER.name}
  namespace: ${LEDGER.namespace}
  labels: { backups.strata.dev/org: globex, backups.strata.dev/project: books, backups.strata.dev/env: test }
spec:
  engine: postgres
  endpoint: { host: 127.0.0.1, port: 9 }
  credentials: { secretRef: { name: postgres-credentials } }
  policy: nightly`;

/** A succeeded logical full of one database (app), as a mover's report leaves it. */
function fullRow(full: typeof MAIN_OLDER) {
  const consistent = Date.parse(full.time);
  const prefix = `strata/default/${full.target}/${full.id}`;
  return {
    id: full.id, namespace: 'default', name: `${full.target}-${full.id}`, targetName: full.target, store: 'local', policy: 'nightly', engine: 'postgres', phase: 'Succeeded', reason: 'scheduled',
    queuedAt: new Date(consistent - 60_000), startedAt: new Date(consistent - 60_000), completedAt: new Date(consistent + 60_000), rawBytes: 5_000_000n, storedBytes: BigInt(full.storedBytes),
    manifestKey: `${prefix}/manifest.json`,
    manifest: {
      mode: 'logical', consistentAt: full.time, databases: ['app'], server: { version: '15.4', major: 15 },
      objects: [{ key: `${prefix}/data/app.dump.zst.age`, sha256: 'a'.repeat(64), role: 'data', database: 'app', compression: 'zstd', size: full.storedBytes }],
    },
  };
}

/** The catalog with the store, the policy, both targets and their fulls; each run on a bucket of its own. */
export async function startRestoreCatalog(name: string): Promise<CatalogHarness> {
  const h = await startCatalogHarness(name);
  const { identity, recipient } = await generateAgeIdentity();
  const bucket = `strata-${name.replace(/_/g, '-')}-${randomBytes(4).toString('hex')}`;
  const docs = [stackDocuments({ bucket, recipients: [recipient], identity, postgres: { host: '127.0.0.1', port: 9, username: 'postgres' } }), ledgerDoc].join('\n---\n');
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  await h.runtime.db.backup.createMany({ data: [fullRow(MAIN_OLDER), fullRow(MAIN_NEWER), fullRow(LEDGER_FULL)] });
  return h;
}

/** POST /restores as an unscoped caller of `role`: the restore's name. */
export async function requestRestore(h: CatalogHarness, role: StrataRole, body: Record<string, unknown>): Promise<string> {
  const res = await h.call(role, 'post', '/api/v1/restores', body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.name as string;
}

/** A console API read as `principal` (scoped or not). */
export async function restAs(h: CatalogHarness, principal: StrataPrincipal, url: string): Promise<request.Response> {
  return request(h.app).get(url).set(await h.auth.headers(principal));
}
