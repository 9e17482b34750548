import { readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import internals from '@prisma/internals';
import { describe, expect, it } from 'vitest';
import { freshTestDatabase } from '@sigil/kit/testing';

/**
 * Each service's Prisma schema and its SQL migrations must describe the same database:
 * apply the migrations to an empty database, introspect it, and compare with the schema's DMMF.
 */
const prismaDir = path.resolve(import.meta.dirname, '..');
const services = readdirSync(prismaDir, { withFileTypes: true })
  .filter((e) => e.isDirectory() && existsSync(path.join(prismaDir, e.name, 'schema')))
  .map((e) => e.name);

type DmmfField = {
  name: string;
  dbName?: string | null;
  kind: string;
  isList: boolean;
  isRequired: boolean;
  isId: boolean;
  isUnique: boolean;
  hasDefaultValue: boolean;
  type: string;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
};
type DmmfModel = { name: string; dbName: string | null; fields: DmmfField[]; primaryKey: { fields: string[] } | null };
type DmmfIndex = { model: string; type: 'id' | 'unique' | 'normal' | 'fulltext'; fields: { name: string }[] };

const SQL_TYPE: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Boolean: 'boolean',
  Float: 'double precision',
  Decimal: 'numeric',
  Json: 'jsonb',
  Bytes: 'bytea',
};

function columnType(field: DmmfField): string {
  if (field.type === 'DateTime') {
    const [native, args] = field.nativeType ?? ['Timestamp', ['3']];
    return `${native === 'Timestamptz' ? 'timestamp with time zone' : 'timestamp without time zone'}(${args[0] ?? '3'})`;
  }
  const base = SQL_TYPE[field.type];
  if (!base) throw new Error(`No SQL type mapping for Prisma type ${field.type}`);
  return field.isList ? `${base}[]` : base;
}

async function expectedFromSchema(service: string) {
  const { getSchemaWithPath, getDMMF } = internals as unknown as {
    getSchemaWithPath(args: { schemaPath: { cliProvidedPath: string } }): Promise<{ schemas: unknown }>;
    getDMMF(args: { datamodel: unknown }): Promise<{ datamodel: { models: DmmfModel[]; indexes: DmmfIndex[] } }>;
  };
  const { schemas } = await getSchemaWithPath({ schemaPath: { cliProvidedPath: path.join(prismaDir, service, 'schema') } });
  const { datamodel } = await getDMMF({ datamodel: schemas });
  const tableOf = new Map(datamodel.models.map((m) => [m.name, m.dbName ?? m.name]));
  const columnOf = (model: DmmfModel, fieldName: string) => {
    const field = model.fields.find((f) => f.name === fieldName);
    return field?.dbName ?? fieldName;
  };
  const columns: string[] = [];
  const indexes: string[] = [];
  const foreignKeys: string[] = [];
  for (const model of datamodel.models) {
    const table = tableOf.get(model.name) as string;
    for (const field of model.fields) {
      if (field.kind === 'object') {
        if (field.relationFromFields?.length) {
          const target = datamodel.models.find((m) => m.name === field.type) as DmmfModel;
          foreignKeys.push(
            `${table}(${field.relationFromFields.map((f) => columnOf(model, f)).join(',')}) -> ${tableOf.get(field.type)}(${(field.relationToFields ?? []).map((f) => columnOf(target, f)).join(',')}) on delete ${(field.relationOnDelete ?? 'Restrict').toLowerCase()}`,
          );
        }
        continue;
      }
      const nullable = field.isList ? 'list' : field.isRequired ? 'not null' : 'null';
      columns.push(`${table}.${field.dbName ?? field.name} ${columnType(field)} ${nullable} ${field.hasDefaultValue ? 'default' : 'no default'}`);
    }
  }
  for (const index of datamodel.indexes) {
    const model = datamodel.models.find((m) => m.name === index.model) as DmmfModel;
    const kind = index.type === 'id' ? 'primary' : index.type === 'unique' ? 'unique' : 'index';
    indexes.push(`${tableOf.get(index.model)} ${kind} (${index.fields.map((f) => columnOf(model, f.name)).join(',')})`);
  }
  return { tables: [...tableOf.values()].sort(), columns: columns.sort(), indexes: indexes.sort(), foreignKeys: foreignKeys.sort() };
}

async function actualFromDatabase(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
    );
    const columns = await client.query<{ row: string }>(`
      SELECT c.table_name || '.' || c.column_name || ' ' ||
        CASE WHEN c.data_type = 'ARRAY' THEN format_type(a.atttypid, NULL)
             WHEN c.data_type LIKE 'timestamp%' THEN c.data_type || '(' || c.datetime_precision || ')'
             ELSE c.data_type END || ' ' ||
        CASE WHEN c.data_type = 'ARRAY' THEN 'list' WHEN c.is_nullable = 'YES' THEN 'null' ELSE 'not null' END || ' ' ||
        CASE WHEN c.column_default IS NULL THEN 'no default' ELSE 'default' END AS row
      FROM information_schema.columns c
      JOIN pg_attribute a ON a.attrelid = ('public.' || quote_ident(c.table_name))::regclass AND a.attname = c.column_name
      WHERE c.table_schema = 'public' AND c.table_name <> '_prisma_migrations'`);
    const indexes = await client.query<{ row: string }>(`
      SELECT t.relname || ' ' || CASE WHEN ix.indisprimary THEN 'primary' WHEN ix.indisunique THEN 'unique' ELSE 'index' END ||
        ' (' || string_agg(a.attname, ',' ORDER BY k.ord) || ')' AS row
      FROM pg_index ix
      JOIN pg_class t ON t.oid = ix.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
      CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord)
      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      -- Partial indexes (rules such as one draft per template) cannot be written in a Prisma schema: migrations only.
      WHERE t.relname <> '_prisma_migrations' AND ix.indpred IS NULL
      GROUP BY t.relname, ix.indexrelid, ix.indisprimary, ix.indisunique`);
    const foreignKeys = await client.query<{ row: string }>(`
      SELECT src.relname || '(' || (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.conkey) WITH ORDINALITY k(n, ord) JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n) ||
        ') -> ' || dst.relname || '(' || (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.confkey) WITH ORDINALITY k(n, ord) JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n) ||
        ') on delete ' || CASE con.confdeltype WHEN 'c' THEN 'cascade' WHEN 'r' THEN 'restrict' WHEN 'n' THEN 'setnull' WHEN 'd' THEN 'setdefault' ELSE 'noaction' END AS row
      FROM pg_constraint con JOIN pg_class src ON src.oid = con.conrelid JOIN pg_class dst ON dst.oid = con.confrelid
      WHERE con.contype = 'f'`);
    return {
      tables: tables.rows.map((r) => r.table_name).sort(),
      columns: columns.rows.map((r) => r.row).sort(),
      indexes: indexes.rows.map((r) => r.row).sort(),
      foreignKeys: foreignKeys.rows.map((r) => r.row).sort(),
    };
  } finally {
    await client.end();
  }
}

describe('Prisma schemas and SQL migrations agree', () => {
  it('finds the data-owning services', () => {
    expect(services).toEqual(expect.arrayContaining(['accounts', 'templates']));
  });

  for (const service of services) {
    it(`${service}: migrations produce exactly the schema's tables, columns, indexes and foreign keys`, async () => {
      const url = await freshTestDatabase(`sigil_schema_check_${service.replace(/-/g, "_")}`, path.join(prismaDir, service, 'migrations'));
      const [expected, actual] = await Promise.all([expectedFromSchema(service), actualFromDatabase(url)]);
      expect(actual.tables).toEqual(expected.tables);
      expect(actual.columns).toEqual(expected.columns);
      expect(actual.indexes).toEqual(expected.indexes);
      expect(actual.foreignKeys).toEqual(expected.foreignKeys);
    });
  }
});
