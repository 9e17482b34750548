// On demand: the diff of two inventories of 5,000 tables each (diffInventories, what `GET /backups/{id}/diff/{other}`
// computes once it has read them): p50 and p95 of 30 diffs (the issue's target: p50 at most 200 ms), with ratios
// against two baselines in the same process: JSON.parse of the two inventories (what reading them costs the catalog
// anyway), and the naive diff one writes first (each table looked up by a scan of the other side, the whole schema of
// both written out and diffed line by line with the same library).
// node_modules/.bin/node test/bench/diff.ts
import { createTwoFilesPatch } from 'diff';

interface Column { name: string; type: string; nullable: boolean; default?: string }
interface Table { name: string; schema: string; kind: string; rowsEstimate: number; exactRows?: number; totalBytes: number; columns: Column[]; indexes: Array<{ name: string; columns: string[]; unique: boolean }>; fingerprint: string; oid?: number }
interface Database { name: string; sizeBytes: number; tables: Table[]; schemaHash: string; migrationTable?: string; migrationVersion?: string; migrations?: string[] }
interface Inventory { collectedAt: string; engine: string; server: { version: string; host: string; systemID: string; major: number; settings: Record<string, string>; sizeBytes: number }; databases: Database[]; schemaHash: string }
interface Diff { tablesRenamed?: unknown[]; tablesAdded?: string[]; tablesDropped?: string[]; columns?: unknown[]; rows?: unknown[]; lines?: string[]; migrationsApplied?: string[] }
type DiffInventories = (before: Inventory, after: Inventory, labels?: { before: string; after: string }) => Diff;

// Loaded by its path: the catalog's package exports no subpath for it, and lint keeps tests from importing into a
// service's folder (the types above are the module's, restated).
const diffModule = new URL('../../services/backup-catalog/src/backups/inventory-diff.ts', import.meta.url).href;
const { diffInventories } = (await import(diffModule)) as { diffInventories: DiffInventories };

const TABLES = 5_000;
const PASSES = 30;
const NAIVE_PASSES = 3;
const TYPES = ['bigint', 'integer', 'text', 'timestamp with time zone', 'numeric(12,2)', 'boolean', 'jsonb', 'uuid'];

function table(i: number): Table {
  const columns: Column[] = Array.from({ length: 8 }, (_, c) => ({
    name: c === 0 ? 'id' : `col_${i}_${c}`,
    type: TYPES[(i + c) % TYPES.length]!,
    nullable: c !== 0,
    ...(c === 2 ? { default: 'now()' } : {}),
  }));
  const name = `table_${String(i).padStart(5, '0')}`;
  return {
    name,
    schema: i % 10 === 0 ? 'billing' : 'public',
    kind: 'table',
    rowsEstimate: 1_000 + i * 37,
    ...(i % 2 === 0 ? { exactRows: 1_000 + i * 37 } : {}),
    totalBytes: 65_536 + i * 512,
    columns,
    indexes: [{ name: `${name}_pkey`, columns: ['id'], unique: true }, { name: `${name}_idx`, columns: [columns[1]!.name], unique: false }],
    fingerprint: `f${i}`,
    // A tenth of the tables has no identity (as on a server whose ids could not be read): renames by columns.
    ...(i % 10 === 3 ? {} : { oid: 16_384 + i }),
  };
}

function inventory(tables: Table[], migrations: string[]): Inventory {
  return {
    collectedAt: '2026-11-28T03:00:00Z',
    engine: 'postgres',
    server: { version: '17.2', host: 'db:5432', systemID: '7440000000000000001', major: 17, settings: {}, sizeBytes: 0 },
    databases: [{ name: 'app', sizeBytes: tables.reduce((n, t) => n + t.totalBytes, 0), tables, schemaHash: `h${migrations.length}`, migrationTable: '_prisma_migrations', migrationVersion: migrations.at(-1)!, migrations }],
    schemaHash: `s${migrations.length}`,
  };
}

/** A migration across the schema: 50 renames (by identity and by columns), 20 dropped, 20 added, 300 tables' columns changed, every row count grown. */
function pair(): { before: Inventory; after: Inventory } {
  const tables = Array.from({ length: TABLES }, (_, i) => table(i));
  const migrations = Array.from({ length: 300 }, (_, i) => `2026${String(i).padStart(6, '0')}_step`);
  const changed = structuredClone(tables).flatMap((t, i): Table[] => {
    if (i % 250 === 1) return [];
    t.rowsEstimate += 100 + (i % 7);
    if (t.exactRows !== undefined) t.exactRows = t.rowsEstimate;
    t.totalBytes += 8_192;
    if (i % 100 === 3 || i % 100 === 5) t.name = `${t.name}_renamed`;
    if (i % 50 === 7) t.columns.push({ name: 'tier', type: 'text', nullable: false, default: "'free'::text" });
    if (i % 50 === 9) t.columns[3]!.type = 'bigint';
    if (i % 50 === 11) t.columns[4]!.nullable = false;
    if (i % 50 === 13) t.columns[5]!.default = '0';
    if (i % 50 === 15) t.indexes.push({ name: `${t.name}_new_idx`, columns: [t.columns[2]!.name], unique: false });
    if ([7, 9, 11, 13, 15].includes(i % 50)) t.fingerprint += 'x';
    return [t];
  });
  for (let k = 0; k < 20; k++) changed.push({ ...table(TABLES + k), oid: 900_000 + k });
  return { before: inventory(tables, migrations), after: inventory(changed, [...migrations, '20270000000_add_tier', '20270000001_backfill']) };
}

// ---- The naive diff (a baseline): scans for every lookup, the whole schemas written out and diffed. ----

const text = (inv: Inventory) =>
  `${inv.databases.flatMap((d) => d.tables.flatMap((t) => [`table ${d.name}.${t.schema}.${t.name}`, ...t.columns.map((c) => `  ${c.name} ${c.type}${c.nullable ? '' : ' NOT NULL'}${c.default ? ` DEFAULT ${c.default}` : ''}`)])).join('\n')}\n`;

function naive(before: Inventory, after: Inventory): number {
  const old = before.databases[0]!.tables;
  const now = after.databases[0]!.tables;
  let changes = 0;
  for (const t of old) {
    const same = now.find((n) => n.schema === t.schema && n.name === t.name) ?? now.find((n) => n.oid !== undefined && n.oid === t.oid);
    if (!same) changes++;
    else for (const c of same.columns) if (!t.columns.some((o) => o.name === c.name && o.type === c.type && o.nullable === c.nullable && o.default === c.default)) changes++;
  }
  return changes + createTwoFilesPatch('before', 'after', text(before), text(after)).length;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

function time(passes: number, run: () => unknown): number[] {
  const times: number[] = [];
  for (let i = 0; i < passes; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

const { before, after } = pair();
const json = [JSON.stringify(before), JSON.stringify(after)];
console.log(`inventories: ${TABLES} tables each, ${(json[0]!.length / 1024 / 1024).toFixed(1)} MiB and ${(json[1]!.length / 1024 / 1024).toFixed(1)} MiB of JSON`);
const first = time(1, () => diffInventories(before, after))[0]!;
const diff = diffInventories(before, after, { before: 'backup a', after: 'backup b' });
console.log(
  `diff: ${diff.tablesRenamed?.length} renamed, ${diff.tablesDropped?.length} dropped, ${diff.tablesAdded?.length} added, ${diff.columns?.length} tables with column changes, ` +
    `${diff.rows?.length} row deltas, ${diff.lines?.length} lines, migrations applied ${diff.migrationsApplied?.join(', ')}`,
);
const diffs = time(PASSES, () => diffInventories(before, after));
const parses = time(PASSES, () => json.map((j) => JSON.parse(j) as unknown));
const naives = time(NAIVE_PASSES, () => naive(before, after));
const p50 = percentile(diffs, 50);
console.log(`diffInventories: p50 ${ms(p50)}, p95 ${ms(percentile(diffs, 95))} over ${PASSES}; first (cold) ${ms(first)}`);
console.log(`baseline JSON.parse of both: p50 ${ms(percentile(parses, 50))} (the diff takes ${(p50 / percentile(parses, 50)).toFixed(2)}x its time)`);
console.log(`baseline naive diff: p50 ${ms(percentile(naives, 50))} over ${NAIVE_PASSES} (the diff takes ${(p50 / percentile(naives, 50)).toFixed(4)}x its time)`);
console.log(`target p50 ≤ 200 ms: ${p50 <= 200 ? 'met' : 'NOT met'}`);
