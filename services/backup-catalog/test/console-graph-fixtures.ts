/**
 * A catalog for the console's GraphQL tests: the test S3 store (with its catalog identity), a Postgres target with
 * point-in-time recovery whose history is seeded (two physical fulls, a failed run, segments with two holes and a
 * partial upload, verification restores), a target whose user may not replicate, and one of another org. The targets'
 * servers answer nothing: no check of the catalog reaches a database.
 */
import { Readable } from 'node:stream';
import request from 'supertest';
import { expect } from 'vitest';
import { createS3Client, ensureBucket, runUploadPipeline } from '@strata/stream';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { generateAgeIdentity, startCatalogHarness, type CatalogHarness } from './helpers.ts';
import { s3Env, stackDocuments } from './fixtures.ts';

export const MB16 = 16n * 1024n * 1024n;
export const SYSTEM = '7300000000000000001';
/** The seeded history's origin: every time below is minutes after it. */
export const T = Date.UTC(2026, 2, 1);
export const at = (minutes: number) => new Date(T + minutes * 60_000);
export const iso = (minutes: number) => at(minutes).toISOString();
export const PITR = { namespace: 'default', name: 'pg-pitr' };

export const FULL_1 = '20260301t000100z-00000001';
export const FULL_2 = '20260301t010100z-00000002';
export const FAILED = '20260301t013000z-00000003';
const walName = (n: number) => `00000001${n.toString(16).toUpperCase().padStart(16, '0')}`;
export const SEGMENT = walName;

const targetDoc = (name: string, labels: Record<string, string>, extra = '') => `apiVersion: backups.strata.dev/v1alpha1
kind: BackupTarget
metadata: { name: ${name}, namespace: default, labels: ${JSON.stringify(labels)} }
spec:
  engine: postgres
  endpoint: { host: 127.0.0.1, port: 9 }
  credentials: { secretRef: { name: pg-credentials } }
${extra}  policy: nightly`;

/** Seeds segment n (16 MiB from n × 16 MiB) holding minutes first..last; a partial one ends inside its file. */
function segmentRow(n: number, first: number, last: number, options: { partial?: boolean; covered?: number; commits?: number } = {}) {
  const start = BigInt(n) * MB16;
  const end = options.partial ? start + 4096n : start + MB16;
  const name = walName(n);
  return {
    key: `strata/default/pg-pitr/wal/${SYSTEM}-1/${name}${options.partial ? '.partial' : ''}.zst.age`, namespace: PITR.namespace, targetName: PITR.name, chainId: `${SYSTEM}-1`, timeline: 1, name,
    startPos: `0/${start.toString(16).toUpperCase()}`, endPos: `0/${end.toString(16).toUpperCase()}`, startLsn: start, endLsn: end,
    firstTime: at(first), lastTime: at(last), coveredUntil: options.covered === undefined ? null : at(options.covered),
    commits: options.commits ?? 10, sha256: 'c'.repeat(64), size: 1000n + BigInt(n), rawSize: MB16, partial: options.partial ?? false, uploadedAt: at(last + 1),
  };
}

/** Segments 1–3 (minutes 0–30), a hole (4), 5–6 (60–80), 7 partial (80–85, covered to 86), a hole (8), 9 (100–110). */
/** Segment 4, which the mirror found missing from the store: listed, in no chain and no span. */
export const MISSING = { ...segmentRow(4, 30, 60), missing: true };
export const SEGMENTS = [segmentRow(1, 0, 10), segmentRow(2, 10, 20), segmentRow(3, 20, 30), segmentRow(5, 60, 70), segmentRow(6, 70, 80), segmentRow(7, 80, 85, { partial: true, covered: 86 }), segmentRow(9, 100, 110)];

function fullRow(id: string, minute: number, endLsn: bigint, extra: { inventory?: { key: string; sha256: string } } = {}) {
  return {
    id, namespace: PITR.namespace, name: `pg-pitr-${id}`, targetName: PITR.name, store: 'local', policy: 'nightly', engine: 'postgres', phase: 'Succeeded', reason: 'scheduled',
    queuedAt: at(minute - 1), startedAt: at(minute - 1), completedAt: at(minute), rawBytes: 9_000_000n, storedBytes: 3_000_000n,
    manifest: {
      mode: 'physical', consistentAt: iso(minute), server: { systemID: SYSTEM, version: '15.4', major: 15 }, position: { startLSN: `0/${(endLsn - 100n).toString(16)}`, endLSN: `0/${endLsn.toString(16)}`, timeline: 1 }, databases: ['app'],
      objects: extra.inventory ? [{ key: extra.inventory.key, sha256: extra.inventory.sha256, role: 'inventory', compression: 'zstd', size: 1, rawSize: 1 }] : [],
    },
  };
}

export const INVENTORY = {
  collectedAt: iso(1), engine: 'postgres', server: { version: '15.4', host: '127.0.0.1', systemID: SYSTEM, major: 15 }, schemaHash: 'sha256:abc', notes: ['pg_stat counters reset at startup'],
  exactCounts: { tables: 1, seconds: 0.2, skipped: ['app.public.events: estimate 2500000 is not under maxRows 100000'] },
  databases: [{ name: 'app', sizeBytes: 7_340_032, schemaHash: 'sha256:def', migrationVersion: '42', tables: [
    { schema: 'public', name: 'orders', kind: 'table', rowsEstimate: 1200, exactRows: 1187, totalBytes: 262_144, tableBytes: 196_608, indexBytes: 65_536, columns: [{ name: 'id', type: 'bigint' }, { name: 'total', type: 'numeric' }], fingerprint: 'f1' },
    { schema: 'public', name: 'events', kind: 'table', rowsEstimate: 2_500_000, totalBytes: 6_291_456, columns: [{ name: 'id', type: 'bigint' }], fingerprint: 'f2' },
  ] }],
};

/** The inventory written to the store as the mover writes it: zstd, then age to the store's recipients. */
async function storeInventory(bucket: string, recipient: string): Promise<{ key: string; sha256: string }> {
  const s3 = s3Env();
  const client = createS3Client({ endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey, pathStyle: true });
  await ensureBucket(client, bucket, s3.region);
  const key = `strata/default/pg-pitr/${FULL_1}/catalog/inventory.json.zst.age`;
  const uploaded = await runUploadPipeline({
    source: Readable.from([Buffer.from(JSON.stringify(INVENTORY))]), compression: { algorithm: 'zstd', level: 'fastest', threads: 1 }, recipients: [recipient], client, bucket, key,
    partSizeBytes: 5 * 1024 * 1024, concurrency: 1, bandwidthBytesPerSecond: 0, stallTimeoutMs: 0, smallSource: true,
  });
  return { key, sha256: uploaded.sha256 };
}

async function seedHistory(h: CatalogHarness, inventory: { key: string; sha256: string }): Promise<void> {
  const db = h.runtime.db;
  await db.segment.createMany({ data: [...SEGMENTS, MISSING] });
  await db.backup.createMany({ data: [fullRow(FULL_1, 1, 1n * MB16 + 500n, { inventory }), fullRow(FULL_2, 61, 5n * MB16 + 500n)] });
  await db.backup.create({
    data: { id: FAILED, namespace: 'default', name: `pg-pitr-${FAILED}`, targetName: PITR.name, store: 'local', policy: 'nightly', engine: 'postgres', phase: 'Failed', message: 'pg_dump: error: connection refused', queuedAt: at(90), completedAt: at(91) },
  });
  const verification = (name: string, backupId: string, created: number, done: number, message: string, checks: Array<{ name: string; passed: boolean; message: string }>) => ({
    id: `rs-${name}`, namespace: 'default', name, targetNamespace: 'default', targetName: PITR.name, backupId, mode: 'sandbox', phase: 'Succeeded', message,
    destination: { mode: 'sandbox', sandbox: `verify-${name}`, verify: true }, createdAt: at(created), completedAt: at(done), checks,
  });
  await db.restore.createMany({
    data: [
      verification('pg-pitr-verify-1', FULL_1, 35, 40, 'restored and checked', [{ name: 'inventory-matches', passed: true, message: '' }]),
      verification('pg-pitr-verify-2', FULL_2, 92, 95, 'checks failed', [{ name: 'schema-matches', passed: false, message: 'table orders differs' }]),
      { id: 'rs-pg-pitr-download', namespace: 'default', name: 'pg-pitr-download', targetNamespace: 'default', targetName: PITR.name, backupId: FULL_1, mode: 'download', phase: 'Succeeded', message: 'ready', createdAt: at(50), completedAt: at(50) },
    ],
  });
  const { resources } = h.runtime.deps;
  await resources.patchStatus(db, 'BackupTarget', 'default', PITR.name, {
    pitr: { enabled: true, replicationCheckedAt: iso(0) },
    lastVerification: { name: `pg-pitr-${FULL_2}`, id: FULL_2, time: iso(61), phase: 'VerifyFailed', verifiedAt: iso(95), restore: 'pg-pitr-verify-2' },
  });
  await resources.patchStatus(db, 'BackupTarget', 'default', 'pg-denied', {
    pitr: { replicationCheckedAt: iso(0), replicationDenied: 'role app has no REPLICATION attribute', replicationFix: 'ALTER ROLE "app" REPLICATION;' },
  });
}

export interface ConsoleGraph {
  h: CatalogHarness;
  bucket: string;
}

/** The catalog with the stores, policies and targets applied and the history seeded; the clock at minute 200. */
export async function startConsoleGraph(name: string): Promise<ConsoleGraph> {
  const h = await startCatalogHarness(name);
  const bucket = `strata-${name.replace(/_/g, '-')}-${Date.now().toString(36)}`;
  h.setNow(at(200));
  const { identity, recipient } = await generateAgeIdentity();
  const docs = [
    stackDocuments({ bucket, recipients: [recipient], identity, pitr: { enabled: true } }),
    `apiVersion: v1\nkind: Secret\nmetadata: { name: pg-credentials, namespace: default }\nstringData: { username: app, password: "" }`,
    targetDoc(PITR.name, { 'backups.strata.dev/org': 'acme', 'backups.strata.dev/project': 'shop', 'backups.strata.dev/env': 'prod' }, '  suspend: true\n'),
    targetDoc('pg-denied', { 'backups.strata.dev/org': 'acme', 'backups.strata.dev/env': 'test' }),
    targetDoc('pg-other', { 'backups.strata.dev/org': 'other', 'backups.strata.dev/env': 'prod' }),
  ].join('\n---\n');
  const applied = await h.call('restorer-admin', 'post', '/api/v1/resources', docs, 'application/yaml');
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  // The apply's scheduler pass and the checks it starts end before the history is written over them.
  await h.runtime.tick();
  await h.runtime.status.refreshDue();
  await h.runtime.status.idle();
  await seedHistory(h, await storeInventory(bucket, recipient));
  return { h, bucket };
}

export type GraphAnswer = { data?: Record<string, unknown> | null; errors?: Array<{ message: string; path?: string[]; extensions: { code: string; status?: number } }> };

/** A GraphQL request to the catalog's subgraph over HTTP, as the gateway sends it. */
export async function graph(h: CatalogHarness, principal: StrataPrincipal | undefined, query: string, variables: Record<string, unknown> = {}): Promise<GraphAnswer> {
  const headers = principal ? await h.auth.headers(principal) : {};
  const res = await request(h.app).post('/graphql').set(headers).send({ query, variables });
  expect(res.status).toBe(200);
  return res.body as GraphAnswer;
}
