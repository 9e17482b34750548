// The diff of two inventories, from hand-built ones: renames by identity and by columns, column and index changes,
// exact and estimated rows, databases, migrations, and the unified schema lines.
import { describe, expect, it } from 'vitest';
import { diffInventories, type Inventory, type InventoryDatabase, type InventoryTable } from '../src/backups/inventory-diff.ts';

type Column = NonNullable<InventoryTable['columns']>[number];

const col = (name: string, type: string, extra: Partial<Column> = {}): Column => ({ name, type, nullable: true, ...extra });

function table(name: string, columns: Column[], extra: Partial<InventoryTable> = {}): InventoryTable {
  return { name, schema: 'public', kind: 'table', rowsEstimate: 100, totalBytes: 8192, columns, fingerprint: JSON.stringify(columns), ...extra };
}

function database(name: string, tables: InventoryTable[], extra: Partial<InventoryDatabase> = {}): InventoryDatabase {
  return { name, sizeBytes: tables.reduce((n, t) => n + t.totalBytes, 0), tables, schemaHash: JSON.stringify(tables.map((t) => [t.name, t.fingerprint])), ...extra };
}

function inventory(databases: InventoryDatabase[], systemID = 'sys-1'): Inventory {
  return {
    collectedAt: '2026-11-28T10:00:00Z',
    engine: 'postgres',
    server: { version: '17', host: 'db:5432', systemID, major: 17, settings: {}, sizeBytes: 0 },
    databases,
    schemaHash: JSON.stringify(databases.map((d) => d.schemaHash)),
  };
}

const customers = [col('id', 'bigint', { nullable: false }), col('email', 'text')];
const orders = [col('id', 'bigint', { nullable: false }), col('customer_id', 'bigint'), col('total', 'numeric(10,2)')];

describe('renames', () => {
  it('matches a renamed table by its OID within one server history, even when its columns changed too', () => {
    const before = inventory([database('app', [table('customers', customers, { oid: 16384 }), table('orders', orders, { oid: 16390 })])]);
    const after = inventory([database('app', [table('clients', [...customers, col('tier', 'text')], { oid: 16384 }), table('orders', orders, { oid: 16390 })])]);
    const diff = diffInventories(before, after);
    expect(diff.tablesRenamed).toEqual([{ from: 'app.public.customers', to: 'app.public.clients', matchedBy: 'identity' }]);
    expect(diff.tablesAdded).toEqual([]);
    expect(diff.tablesDropped).toEqual([]);
    expect(diff.columns).toEqual([
      { table: 'app.public.clients', added: ['tier'], removed: [], typeChanged: [], nullabilityChanged: [], defaultChanged: [], indexAdded: [], indexDropped: [] },
    ]);
  });

  it('does not trust OIDs across server histories: the same OID on another server is another table', () => {
    const before = inventory([database('app', [table('customers', customers, { oid: 16384 })])], 'sys-1');
    const after = inventory([database('app', [table('invoices', orders, { oid: 16384 })])], 'sys-2');
    const diff = diffInventories(before, after);
    expect(diff.tablesRenamed).toEqual([]);
    expect(diff.tablesDropped).toEqual(['app.public.customers']);
    expect(diff.tablesAdded).toEqual(['app.public.invoices']);
  });

  it('matches by identical column lists without identities, but only when one dropped and one added table share them', () => {
    const before = inventory([database('app', [table('customers', customers), table('a', orders), table('b', orders)])], '');
    const after = inventory([database('app', [table('people', customers), table('c', orders), table('d', orders)])], '');
    const diff = diffInventories(before, after);
    expect(diff.tablesRenamed).toEqual([{ from: 'app.public.customers', to: 'app.public.people', matchedBy: 'columns' }]);
    expect(diff.tablesDropped).toEqual(['app.public.a', 'app.public.b']);
    expect(diff.tablesAdded).toEqual(['app.public.c', 'app.public.d']);
  });
});

describe('column changes', () => {
  it('names type, nullability, default and index changes of a table, as from → to', () => {
    const before = inventory([database('app', [table('orders', orders, { indexes: [{ name: 'orders_pkey', columns: ['id'], unique: true }, { name: 'by_customer', columns: ['customer_id'], unique: false }] })])]);
    const changed = [
      col('id', 'bigint', { nullable: false }),
      col('customer_id', 'bigint', { nullable: false }),
      col('total', 'numeric(12,2)', { default: '0' }),
      col('status', 'text', { default: "'new'::text" }),
    ];
    const after = inventory([database('app', [table('orders', changed, { indexes: [{ name: 'orders_pkey', columns: ['id'], unique: true }, { name: 'by_customer', columns: ['customer_id', 'status'], unique: false }, { name: 'by_status', columns: ['status'], unique: false }] })])]);
    const diff = diffInventories(before, after);
    expect(diff.columns).toEqual([
      {
        table: 'app.public.orders',
        added: ['status'],
        removed: [],
        typeChanged: ['total: numeric(10,2) → numeric(12,2)'],
        nullabilityChanged: ['customer_id: NULL → NOT NULL'],
        defaultChanged: ['total: none → 0'],
        indexAdded: ['by_customer', 'by_status'],
        indexDropped: ['by_customer'],
      },
    ]);
    expect(diff.schemaChanged).toBe(true);
  });

  it('reports nothing for tables whose columns and indexes are the same', () => {
    const same = inventory([database('app', [table('orders', orders)])]);
    const diff = diffInventories(same, structuredClone(same));
    expect(diff.columns).toEqual([]);
    expect(diff.rows).toEqual([]);
    expect(diff.lines).toEqual([]);
    expect(diff.schemaChanged).toBe(false);
  });
});

describe('rows', () => {
  it('uses exact counts when both inventories counted the table, estimates otherwise, and says which', () => {
    const before = inventory([database('app', [table('customers', customers, { exactRows: 200, rowsEstimate: 180 }), table('orders', orders, { rowsEstimate: 1000, exactRows: 990 })])]);
    const after = inventory([
      database('app', [table('customers', customers, { exactRows: 250, rowsEstimate: 240, totalBytes: 16384 }), table('orders', orders, { rowsEstimate: 1500 })]),
    ]);
    const diff = diffInventories(before, after);
    expect(diff.rows).toEqual([
      { table: 'app.public.customers', rowsBefore: 200, rowsAfter: 250, sizeBefore: 8192, sizeAfter: 16384, rowsPct: 25, estimated: false },
      { table: 'app.public.orders', rowsBefore: 1000, rowsAfter: 1500, sizeBefore: 8192, sizeAfter: 8192, rowsPct: 50, estimated: true },
    ]);
  });

  it('counts an added table from nothing and a dropped one to nothing', () => {
    const before = inventory([database('app', [table('old', orders, { exactRows: 7 })])]);
    const after = inventory([database('app', [table('new', customers, { exactRows: 3 })])]);
    const diff = diffInventories(before, after);
    expect(diff.rows).toEqual([
      { table: 'app.public.new', rowsBefore: 0, rowsAfter: 3, sizeBefore: 0, sizeAfter: 8192, rowsPct: 100, estimated: false },
      { table: 'app.public.old', rowsBefore: 7, rowsAfter: 0, sizeBefore: 8192, sizeAfter: 0, rowsPct: -100, estimated: false },
    ]);
  });
});

describe('databases, sizes and migrations', () => {
  it('lists databases added and dropped with their tables, the sizes, and the migrations applied between', () => {
    const before = inventory([
      database('app', [table('customers', customers), table('_prisma_migrations', [col('migration_name', 'text')])], {
        migrationTable: '_prisma_migrations',
        migrationVersion: '20260101_init',
        migrations: ['20260101_init'],
      }),
      database('legacy', [table('things', orders)]),
    ]);
    const after = inventory([
      database('app', [table('customers', customers), table('_prisma_migrations', [col('migration_name', 'text')], { rowsEstimate: 102 })], {
        migrationTable: '_prisma_migrations',
        migrationVersion: '20260301_add_tier',
        migrations: ['20260101_init', '20260201_orders', '20260301_add_tier'],
      }),
      database('reports', [table('daily', customers)]),
    ]);
    const diff = diffInventories(before, after);
    expect(diff.databasesAdded).toEqual(['reports']);
    expect(diff.databasesDropped).toEqual(['legacy']);
    expect(diff.tablesAdded).toEqual(['reports.public.daily']);
    expect(diff.tablesDropped).toEqual(['legacy.public.things']);
    expect(diff.migrationBefore).toBe('20260101_init');
    expect(diff.migrationAfter).toBe('20260301_add_tier');
    expect(diff.migrationsApplied).toEqual(['20260201_orders', '20260301_add_tier']);
    expect(diff.sizeBefore).toBe(3 * 8192);
    expect(diff.sizeAfter).toBe(3 * 8192);
  });

  it('names no migration as applied when the older inventory had the table but did not record its list', () => {
    const before = inventory([database('app', [], { migrationTable: 'knex_migrations', migrationVersion: '001_init.js' })]);
    const after = inventory([database('app', [], { migrationTable: 'knex_migrations', migrationVersion: '002_tier.js', migrations: ['001_init.js', '002_tier.js'] })]);
    expect(diffInventories(before, after).migrationsApplied).toEqual([]);
  });
});

describe('lines', () => {
  it('are a unified diff of the changed tables only, headed by the two sides', () => {
    const untouched = Array.from({ length: 50 }, (_, i) => table(`t${i}`, orders));
    const before = inventory([database('app', [...untouched, table('customers', customers, { oid: 1 })])]);
    const after = inventory([database('app', [...untouched, table('clients', [...customers, col('tier', 'text', { nullable: false, default: "'free'::text" })], { oid: 1 })])]);
    const lines = diffInventories(before, after, { before: 'backup A', after: 'backup B' }).lines;
    expect(lines).toEqual([
      '--- backup A',
      '+++ backup B',
      '@@ -1,3 +1,4 @@',
      '-  table app.public.customers',
      '+  table app.public.clients',
      '     id bigint NOT NULL',
      '     email text',
      "+    tier text NOT NULL DEFAULT 'free'::text",
    ]);
  });

  it("place each table's lines where they stand in the whole text, tables and databases on one side only included", () => {
    const before = inventory([database('app', [table('a', [col('id', 'bigint')]), table('b', [col('x', 'text')])]), database('old', [table('t', [col('y', 'int')])])]);
    const after = inventory([database('app', [table('a', [col('id', 'integer')]), table('c', [col('z', 'date')])])]);
    expect(diffInventories(before, after, { before: 'A', after: 'B' }).lines).toEqual([
      '--- A',
      '+++ B',
      '@@ -1,7 +1,4 @@',
      '   table app.public.a',
      '-    id bigint',
      '+    id integer',
      '-  table app.public.b',
      '-    x text',
      '+  table app.public.c',
      '+    z date',
      '-database old',
      '-  table old.public.t',
      '-    y int',
    ]);
  });
});
