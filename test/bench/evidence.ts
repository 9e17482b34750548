// On demand (issue 11): the seal and certificate of a 20-page document with 40 fields, public verification on logs of
// 10,000 and 1,000,000 leaves, and appending 100,000 leaves with the time to sign an anchor, each against a baseline
// run in the same process. Needs Postgres (POSTGRES_URL, default the machine's). node_modules/.bin/node test/bench/evidence.ts
// BENCH_RUNS, BENCH_BIG_LOG (default 1000000) and BENCH_APPEND (default 100000) change the sizes.
import { createHash } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { freshTestDatabase, silentLogger } from '@sigil/kit/testing';
import { generateSealingIdentity } from '@sigil/kit/sealing-identity';
import { stampValues } from '@sigil/envelopes/render-pdf';
import { createDb, type Db } from '@sigil/evidence/db';
import { buildCertificate } from '@sigil/evidence/certificate';
import { createSealer } from '@sigil/evidence/sealer';
import { anchorOnce, registerAnchorKey } from '@sigil/evidence/log-anchors';
import { createPublicLog } from '@sigil/evidence/log-public';
import { appendToLog, leafDataOf, type LogEntry } from '@sigil/evidence/log-store';
import { appendLeaf, leafHash, type Hash } from '@sigil/tlog/merkle';
import { generateNoteKey, parseSignerKey } from '@sigil/tlog/note';

const RUNS = Number(process.env.BENCH_RUNS ?? 25);
const BIG = Number(process.env.BENCH_BIG_LOG ?? 1_000_000);
const APPEND = Number(process.env.BENCH_APPEND ?? 100_000);
const MIGRATIONS = path.resolve(import.meta.dirname, '../../prisma/evidence/migrations');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))] as number;
async function time(runs: number, run: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await run(i);
    samples.push(performance.now() - start);
  }
  return samples;
}
const ms = (x: number) => `${x.toFixed(1)} ms`;

// ---------------------------------------------------------------- seal + certificate
async function sealBench(): Promise<void> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.TimesRoman);
  for (let p = 0; p < 20; p++) {
    const page = doc.addPage([612, 792]);
    for (let line = 0; line < 40; line++) page.drawText(`Clause ${p + 1}.${line + 1}: the parties agree to the terms set out in this clause.`, { x: 72, y: 740 - line * 16, size: 10, font });
  }
  const original = Buffer.from(await doc.save());
  const fields = Array.from({ length: 40 }, (_, i) => ({
    id: `f${i}`, role: 'client', type: (i % 4 === 0 ? 'signature' : 'text') as 'signature' | 'text', required: true, page: (i % 20) + 1, x: 72, y: 100 + Math.floor(i / 20) * 40, width: 300, height: 24,
  }));
  const values = Object.fromEntries(fields.map((f, i) => [f.id, f.type === 'signature' ? { kind: 'typed', text: `Signer ${i}` } : `Value number ${i}`]));
  const completed = await stampValues(original, fields, values);
  const sealer = await createSealer(await generateSealingIdentity('Bench'));
  const envelope = { id: 'env_bench0000000000000000', testMode: false, completedAt: new Date().toISOString(), recipients: [{ id: 'rcp_1', role: 'client', name: 'Ada', email: 'ada@example.com' }] };
  const entries = Array.from({ length: 30 }, (_, i) => ({ seq: i + 1, type: 'recipient.viewed', at: new Date().toISOString(), actor: { kind: 'recipient', ip: '203.0.113.7', userAgent: 'Firefox' }, data: {}, prevHash: '0'.repeat(64), hash: 'a'.repeat(64) }));
  const sealAndCertify = async () => {
    const sealed = await sealer.seal(completed, 'Sealed by Sigil');
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    await sealer.seal(await buildCertificate({ envelope, documentSha256: sha(completed), sealedSha256: sha(sealed), entries }), 'Certificate of completion');
  };
  for (let i = 0; i < 3; i++) await sealAndCertify();
  const baseline: number[] = [];
  const seal: number[] = [];
  for (let round = 0; round < 2; round++) {
    baseline.push(...(await time(RUNS, async () => (await PDFDocument.load(completed)).save())));
    seal.push(...(await time(RUNS, sealAndCertify)));
  }
  console.log(`\nSeal + certificate: 20 pages (${(completed.length / 1024).toFixed(0)} KiB), 40 stamped fields, ${seal.length} runs each, interleaved`);
  console.log(`  baseline: pdf-lib load + save of the completed document   p50 ${ms(median(baseline))}`);
  console.log(`  seal (PAdES) + certificate (built and sealed)             p50 ${ms(median(seal))}  p99 ${ms(p99(seal))}  ratio ${(median(seal) / median(baseline)).toFixed(2)}x  target p50 <= 300 ms`);
}

// ---------------------------------------------------------------- verify on small and big logs
/** Fills a log the way appends would, but in bulk (one INSERT per 20,000 rows), so a million leaves take a minute. */
async function bulkLog(url: string, size: number): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  let frontier: Hash[] = [];
  const hashes: string[] = [];
  let leaves: { idx: number[]; data: Buffer[]; sha: string[]; env: string[] } = { idx: [], data: [], sha: [], env: [] };
  let nodes: { level: number[]; idx: number[]; hash: Buffer[] } = { level: [], idx: [], hash: [] };
  const flush = async () => {
    await pool.query(
      "INSERT INTO log_leaves (mode, idx, leaf_data, document_sha256, envelope_id, organization_id, document) SELECT 'live', i, d, s, e, 'org_bench', 'sealed' FROM unnest($1::bigint[], $2::bytea[], $3::text[], $4::text[]) AS t(i, d, s, e)",
      [leaves.idx, leaves.data, leaves.sha, leaves.env],
    );
    await pool.query("INSERT INTO log_nodes (mode, level, idx, hash) SELECT 'live', l, i, h FROM unnest($1::int[], $2::bigint[], $3::bytea[]) AS t(l, i, h)", [nodes.level, nodes.idx, nodes.hash]);
    leaves = { idx: [], data: [], sha: [], env: [] };
    nodes = { level: [], idx: [], hash: [] };
  };
  for (let i = 0; i < size; i++) {
    const sha = createHash('sha256').update(`bench document ${i}`).digest('hex');
    const entry: LogEntry = { envelopeId: `env_bench${String(i).padStart(16, '0')}`, organizationId: 'org_bench', document: 'sealed', sha256: sha, sealedAt: '2026-11-25T00:00:00.000Z', completedAt: null, testMode: false };
    const data = leafDataOf(entry);
    const appended = appendLeaf(frontier, i, leafHash(data));
    frontier = appended.frontier;
    leaves.idx.push(i);
    leaves.data.push(data);
    leaves.sha.push(sha);
    leaves.env.push(entry.envelopeId);
    for (const n of appended.created) {
      nodes.level.push(n.level);
      nodes.idx.push(n.index);
      nodes.hash.push(n.hash);
    }
    hashes.push(sha);
    if (leaves.idx.length === 20_000) await flush();
  }
  if (leaves.idx.length) await flush();
  await pool.query("UPDATE log_heads SET size = $1, frontier = $2 WHERE mode = 'live'", [size, frontier]);
  await pool.query('ANALYZE');
  await pool.end();
  return hashes;
}

async function verifyBench(): Promise<void> {
  console.log(`\nVerify (POST /v1/public/verify's use case: leaf by hash, newest anchor, inclusion proof), ${RUNS * 8} random leaves per log`);
  const signer = parseSignerKey(generateNoteKey('bench/anchors').signerKey);
  for (const size of [10_000, BIG]) {
    const url = await freshTestDatabase(`sigil_bench_verify_${size}`, MIGRATIONS);
    const db = createDb(url);
    const started = performance.now();
    const hashes = await bulkLog(url, size);
    const filled = performance.now() - started;
    await registerAnchorKey(db, signer, new Date());
    await anchorOnce({ db, signer, origin: () => 'bench/sigil/log/live', intervalMs: 1000, log: silentLogger() }, 'live');
    const log = createPublicLog({ db });
    const pick = (i: number) => hashes[(i * 7919 + 13) % hashes.length] as string;
    for (let i = 0; i < 50; i++) await log.verify(pick(i));
    const baseline: number[] = [];
    const verify: number[] = [];
    let proofLength = 0;
    for (let round = 0; round < 4; round++) {
      baseline.push(...(await time(RUNS * 2, (i) => db.logLeaf.findUnique({ where: { documentSha256: pick(i + round * 1000) } }))));
      verify.push(...(await time(RUNS * 2, async (i) => (proofLength = (await log.verify(pick(i + round * 1000))).proof.length))));
    }
    console.log(`  ${size.toLocaleString('en')} leaves (filled in ${(filled / 1000).toFixed(1)} s): baseline (the leaf by hash) p50 ${ms(median(baseline))}; verify p50 ${ms(median(verify))}, p99 ${ms(p99(verify))}, ratio ${(median(verify) / median(baseline)).toFixed(2)}x; proof ${proofLength} hashes (log2 n = ${Math.log2(size).toFixed(1)})`);
    await db.$disconnect();
  }
}

// ---------------------------------------------------------------- appends and anchors
async function appendBench(): Promise<void> {
  const url = await freshTestDatabase('sigil_bench_append', MIGRATIONS);
  const db: Db = createDb(url);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  await pool.query('CREATE TABLE bench_rows (id BIGINT PRIMARY KEY, data BYTEA NOT NULL, sha TEXT NOT NULL)');
  const entry = (i: number, document: LogEntry['document']): LogEntry => ({
    envelopeId: `env_append${String(Math.floor(i / 2)).padStart(16, '0')}`, organizationId: 'org_bench', document, sha256: createHash('sha256').update(`append ${i}`).digest('hex'), sealedAt: new Date().toISOString(), completedAt: null, testMode: false,
  });
  // Baseline: the same two rows a seal appends, inserted in one transaction without the log's lock and nodes.
  const baselineRuns = 2_000;
  const baseline = await time(baselineRuns, async (i) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('INSERT INTO bench_rows VALUES ($1, $2, $3), ($4, $5, $6)', [2 * i, leafDataOf(entry(2 * i, 'sealed')), 'x', 2 * i + 1, leafDataOf(entry(2 * i + 1, 'certificate')), 'y']);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  });
  const started = performance.now();
  const appends = await time(APPEND / 2, (i) => appendToLog(db, 'live', [entry(2 * i, 'sealed'), entry(2 * i + 1, 'certificate')]));
  const seconds = (performance.now() - started) / 1000;
  const signer = parseSignerKey(generateNoteKey('bench/anchors').signerKey);
  await registerAnchorKey(db, signer, new Date());
  let clock = Date.now();
  const anchors: number[] = [];
  for (let i = 0; i < 20; i++) {
    await appendToLog(db, 'live', [entry(APPEND + i, 'sealed')]);
    clock += 2_000;
    const start = performance.now();
    if (!(await anchorOnce({ db, signer, origin: () => 'bench/sigil/log/live', intervalMs: 1000, clock: () => new Date(clock), log: silentLogger() }, 'live'))) throw new Error('no anchor was signed');
    anchors.push(performance.now() - start);
  }
  console.log(`\nAppending ${APPEND.toLocaleString('en')} leaves, two per transaction as a seal does, one after the other`);
  console.log(`  baseline: the same two rows in a bare transaction   p50 ${ms(median(baseline))}`);
  console.log(`  append (head lock, leaves, nodes, head)            p50 ${ms(median(appends))}  p99 ${ms(p99(appends))}  ratio ${(median(appends) / median(baseline)).toFixed(2)}x  => ${Math.round(APPEND / seconds).toLocaleString('en')} leaves/s`);
  console.log(`  anchor (lock, root from the frontier, sign the checkpoint, insert), on a ${APPEND.toLocaleString('en')}-leaf log: p50 ${ms(median(anchors))}, p99 ${ms(p99(anchors))}`);
  await pool.end();
  await db.$disconnect();
}

await sealBench();
await verifyBench();
await appendBench();
