import { Writable } from 'node:stream';
import type { RestoreJob, StrataReports } from '@sigil/proto/strata-jobs';
import { runDownloadPipeline, type S3Client } from '@strata/stream';
import { driverFor } from '../engines/index.ts';
import { withClient } from '../engines/postgres/shared.ts';
import { withConnection } from '../engines/mysql/shared.ts';
import type { Inventory, InventoryDatabase, InventoryTable } from '../engines/types.ts';
import type { ManifestObject } from './backup.ts';

export type CheckResult = NonNullable<StrataReports['restore.succeeded']['checks']>[number];

const MAX_INVENTORY_BYTES = 64 * 1024 * 1024;
/** Row counts of tables this small are compared with an absolute slack: estimates of tiny tables are rough. */
const SMALL_TABLE_ROWS = 1000;
const EXACT_COUNT = { maxRows: 50_000_000, timeoutMs: 120_000 };

/**
 * The checks a restore was asked to run on what it restored (a verification restore always asks): the restored
 * databases are inventoried as the backup was, and compared with the backup's own inventory; the target's SQL checks
 * run on them. Each check gives a CheckResult; a check never throws (a failing query is a failed check).
 */
export async function runRestoreChecks(job: RestoreJob, client: S3Client, manifest: { objects?: ManifestObject[] }, names: Map<string, string>, signal: AbortSignal): Promise<CheckResult[]> {
  const wanted = job.checks ?? [];
  if (wanted.length === 0) return [];
  const engine = job.destination.engine;
  if (engine === 'mongodb') return wanted.map((name) => ({ name, passed: false, message: 'checks of MongoDB restores are not available in this release' }));
  let inventories: { backup: Inventory; restored: Inventory } | Error | undefined;
  if (wanted.some((c) => c !== 'target-checks')) {
    inventories = await Promise.all([readBackupInventory(job, client, manifest, signal), driverFor(engine).inventory(job.destination, [...names.values()], { exactCounts: EXACT_COUNT })]).then(
      ([backup, restored]) => ({ backup, restored }),
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
  }
  const results: CheckResult[] = [];
  for (const check of wanted) {
    if (check === 'target-checks') results.push(...(await targetChecks(job, names)));
    else if (inventories instanceof Error) results.push({ name: check, passed: false, message: `the inventories could not be compared: ${inventories.message}` });
    else if (inventories) results.push(compare(check, inventories.backup, inventories.restored, names));
  }
  return results;
}

async function readBackupInventory(job: RestoreJob, client: S3Client, manifest: { objects?: ManifestObject[] }, signal: AbortSignal): Promise<Inventory> {
  const object = manifest.objects?.find((o) => o.role === 'inventory');
  if (!object) throw new Error('the backup holds no inventory to compare with');
  const chunks: Buffer[] = [];
  let size = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > MAX_INVENTORY_BYTES) return callback(new Error('the backup inventory is too large'));
      chunks.push(chunk);
      callback();
    },
  });
  await runDownloadPipeline({ client, bucket: job.store.bucket, key: object.key, expectedSha256: object.sha256, identity: job.store.identity, compression: object.compression, sink, bandwidthBytesPerSecond: 0, stallTimeoutMs: job.stallTimeoutMs, signal });
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Inventory;
}

function compare(check: string, backup: Inventory, restored: Inventory, names: Map<string, string>): CheckResult {
  const pairs = [...names].map(([source, target]) => ({
    source,
    before: backup.databases.find((d) => d.name === source),
    after: restored.databases.find((d) => d.name === target),
  }));
  const problems: string[] = [];
  for (const { source, before, after } of pairs) {
    if (!before || !after) {
      problems.push(`${source}: ${before ? 'not restored' : 'not in the backup inventory'}`);
      continue;
    }
    if (check === 'inventory-matches') problems.push(...inventoryProblems(source, before, after));
    else if (check === 'schema-matches' && before.schemaHash !== after.schemaHash) problems.push(`${source}: schema hash ${after.schemaHash.slice(0, 12)} differs from the backup's ${before.schemaHash.slice(0, 12)}`);
    else if (check.startsWith('row-estimates-within-')) problems.push(...rowProblems(source, before, after, Number(/(\d+)pct$/.exec(check)?.[1] ?? 10)));
  }
  const tables = pairs.reduce((sum, p) => sum + (p.after?.tables.length ?? 0), 0);
  return problems.length
    ? { name: check, passed: false, message: summarize(problems) }
    : { name: check, passed: true, message: `${pairs.length} database${pairs.length === 1 ? '' : 's'}, ${tables} tables agree with the backup's inventory` };
}

const tableKey = (t: InventoryTable) => (t.schema ? `${t.schema}.${t.name}` : t.name);

function inventoryProblems(source: string, before: InventoryDatabase, after: InventoryDatabase): string[] {
  const had = new Set(before.tables.map(tableKey));
  const has = new Set(after.tables.map(tableKey));
  return [
    ...[...had].filter((t) => !has.has(t)).map((t) => `${source}: table ${t} is missing`),
    ...[...has].filter((t) => !had.has(t)).map((t) => `${source}: table ${t} is not in the backup`),
  ];
}

function rowProblems(source: string, before: InventoryDatabase, after: InventoryDatabase, percent: number): string[] {
  const problems: string[] = [];
  for (const table of after.tables) {
    const original = before.tables.find((t) => tableKey(t) === tableKey(table));
    const expected = original?.exactRows ?? original?.rowsEstimate;
    const actual = table.exactRows ?? table.rowsEstimate;
    // A Postgres table never analysed has no estimate (-1): nothing to compare with.
    if (expected === undefined || expected < 0 || actual < 0) continue;
    const slack = Math.max((expected * percent) / 100, expected < SMALL_TABLE_ROWS ? SMALL_TABLE_ROWS * (percent / 100) : 0);
    if (Math.abs(actual - expected) > slack) problems.push(`${source}: ${tableKey(table)} has ${actual} rows, the backup ${expected} (more than ${percent}% apart)`);
  }
  return problems;
}

function summarize(problems: string[]): string {
  const shown = problems.slice(0, 5).join('; ');
  return problems.length > 5 ? `${shown}; and ${problems.length - 5} more` : shown;
}

/** Each SQL check of the target in its database (default: the first restored one) must return a single true. */
async function targetChecks(job: RestoreJob, names: Map<string, string>): Promise<CheckResult[]> {
  const first = [...names.values()][0] ?? job.destination.database;
  const checks = job.targetChecks ?? [];
  if (checks.length === 0) return [{ name: 'target-checks', passed: true, message: 'the target defines no SQL checks' }];
  const results: CheckResult[] = [];
  for (const check of checks) {
    const database = check.database ? (names.get(check.database) ?? check.database) : first;
    try {
      const value = await scalar(job, database, check.sql);
      const passed = value === true || value === 't' || value === 1 || value === '1' || value === 1n;
      results.push({ name: `target-checks:${check.name}`, passed, message: passed ? `true in ${database}` : `returned ${JSON.stringify(String(value))} in ${database}, not true` });
    } catch (error) {
      results.push({ name: `target-checks:${check.name}`, passed: false, message: `failed in ${database}: ${(error as Error).message}` });
    }
  }
  return results;
}

async function scalar(job: RestoreJob, database: string, sql: string): Promise<unknown> {
  const rows: unknown[][] =
    job.destination.engine === 'postgres'
      ? await withClient(job.destination, database, async (c) => (await c.query({ text: sql, rowMode: 'array' })).rows as unknown[][])
      : await withConnection(job.destination, database, async (c) => (await c.query({ sql, rowsAsArray: true }))[0] as unknown[][]);
  if (rows.length !== 1 || rows[0]?.length !== 1) throw new Error(`returned ${rows.length} rows of ${rows[0]?.length ?? 0} columns, not a single value`);
  return rows[0][0];
}
