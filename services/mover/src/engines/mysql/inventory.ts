/** MySQL and MariaDB: Inventories and checksums read from information_schema: tables, row estimates, migration versions. */

import type mysql from 'mysql2/promise';
import { appliedOldestFirst, canonicalHash, MIGRATION_TABLES, sha256, sortedTuples } from '../inventory.ts';
import type { InventoryColumn, InventoryDatabase, InventoryOptions, InventoryTable } from '../types.ts';
import type { Row} from './shared.ts';
import { num, quoteIdent, rows, str } from './shared.ts';

/** Definitions name their own database (`db`.`t`): leave it out, so a restore under another name describes alike. */
export function unqualify(text: string, database: string): string {
  return text.split(`${quoteIdent(database)}.`).join('');
}

/**
 * InnoDB's table ids by table name: a table keeps its id across RENAME TABLE (and an instant ALTER), so the diff of
 * two backups can tell a rename from a drop and a create. Reading them needs PROCESS; without it, a note and none.
 */
async function innodbTableIds(c: mysql.Connection, database: string, mariadb: boolean, notes: string[]): Promise<Map<string, number>> {
  const view = mariadb ? 'information_schema.INNODB_SYS_TABLES' : 'information_schema.INNODB_TABLES';
  try {
    const found = await rows(c, `SELECT NAME AS name, TABLE_ID AS id FROM ${view} WHERE NAME LIKE ?`, [`${database.replace(/[\\%_]/g, '\\$&')}/%`]);
    return new Map(found.map((r) => [str(r.name).slice(database.length + 1), num(r.id)]));
  } catch (error) {
    notes.push(`${database}: no InnoDB table ids (renames are matched by columns): ${(error as Error).message}`);
    return new Map();
  }
}

export async function inventoryDatabase(
  c: mysql.Connection,
  database: string,
  mariadb: boolean,
  options: InventoryOptions,
  notes: string[],
  extra: Record<string, string>,
): Promise<InventoryDatabase> {
  const schema = (
    await rows(c, 'SELECT DEFAULT_CHARACTER_SET_NAME AS cs, DEFAULT_COLLATION_NAME AS co FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [database])
  )[0];
  if (!schema) throw new Error(`database "${database}" does not exist`);
  extra[`${database}.charset`] = str(schema.cs);
  extra[`${database}.collation`] = str(schema.co);

  const tables = await rows(
    c,
    `SELECT TABLE_NAME AS name, TABLE_TYPE AS type, ENGINE AS engine, TABLE_ROWS AS tableRows, DATA_LENGTH AS dataLength,
            INDEX_LENGTH AS indexLength, TABLE_COLLATION AS collation
       FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE <> 'VIEW' ORDER BY TABLE_NAME`,
    [database],
  );
  const columns = await rows(
    c,
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS def, EXTRA AS extra,
            COLLATION_NAME AS collation, GENERATION_EXPRESSION AS generation
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    [database],
  );
  const stats = await rows(c, `SELECT * FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`, [database]);
  const fks = await rows(
    c,
    `SELECT k.TABLE_NAME AS t, k.CONSTRAINT_NAME AS name, k.COLUMN_NAME AS col, k.REFERENCED_TABLE_SCHEMA AS refSchema,
            k.REFERENCED_TABLE_NAME AS refTable, k.REFERENCED_COLUMN_NAME AS refCol, r.UPDATE_RULE AS onUpdate, r.DELETE_RULE AS onDelete
       FROM information_schema.KEY_COLUMN_USAGE k
       JOIN information_schema.REFERENTIAL_CONSTRAINTS r
         ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME AND r.TABLE_NAME = k.TABLE_NAME
      WHERE k.TABLE_SCHEMA = ? AND k.REFERENCED_TABLE_NAME IS NOT NULL
      ORDER BY k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION`,
    [database],
  );
  let checks: Row[] = [];
  try {
    checks = mariadb
      ? await rows(c, `SELECT TABLE_NAME AS t, CONSTRAINT_NAME AS name, CHECK_CLAUSE AS clause FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?`, [database])
      : await rows(
          c,
          `SELECT tc.TABLE_NAME AS t, tc.CONSTRAINT_NAME AS name, cc.CHECK_CLAUSE AS clause
             FROM information_schema.TABLE_CONSTRAINTS tc
             JOIN information_schema.CHECK_CONSTRAINTS cc ON cc.CONSTRAINT_SCHEMA = tc.CONSTRAINT_SCHEMA AND cc.CONSTRAINT_NAME = tc.CONSTRAINT_NAME
            WHERE tc.TABLE_SCHEMA = ? AND tc.CONSTRAINT_TYPE = 'CHECK'`,
          [database],
        );
  } catch (error) {
    notes.push(`${database}: check constraints not read: ${(error as Error).message}`);
  }
  const triggers = await rows(
    c,
    `SELECT EVENT_OBJECT_TABLE AS t, TRIGGER_NAME AS name, ACTION_TIMING AS timing, EVENT_MANIPULATION AS manipulation, ACTION_ORDER AS ord,
            ACTION_STATEMENT AS body
       FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? ORDER BY TRIGGER_NAME`,
    [database],
  );
  const views = await rows(
    c,
    `SELECT TABLE_NAME AS name, VIEW_DEFINITION AS def, CHECK_OPTION AS checkOption, SECURITY_TYPE AS sec
       FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME`,
    [database],
  );
  const routines = await rows(
    c,
    `SELECT SPECIFIC_NAME AS spec, ROUTINE_NAME AS name, ROUTINE_TYPE AS type, DTD_IDENTIFIER AS ret, ROUTINE_DEFINITION AS def,
            IS_DETERMINISTIC AS det, SQL_DATA_ACCESS AS dataAccess, SECURITY_TYPE AS sec
       FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? ORDER BY ROUTINE_TYPE, ROUTINE_NAME`,
    [database],
  );
  const parameters = await rows(
    c,
    `SELECT SPECIFIC_NAME AS spec, ROUTINE_TYPE AS type, ORDINAL_POSITION AS pos, PARAMETER_MODE AS pmode, PARAMETER_NAME AS name, DTD_IDENTIFIER AS dtd
       FROM information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA = ? AND ORDINAL_POSITION > 0 ORDER BY SPECIFIC_NAME, ORDINAL_POSITION`,
    [database],
  );
  const events = await rows(
    c,
    `SELECT EVENT_NAME AS name, EVENT_DEFINITION AS def, INTERVAL_VALUE AS iv, INTERVAL_FIELD AS field, EVENT_TYPE AS type
       FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ? ORDER BY EVENT_NAME`,
    [database],
  );

  const tableIds = await innodbTableIds(c, database, mariadb, notes);

  const group = <T extends Row>(list: T[], key: string): Map<string, T[]> => {
    const map = new Map<string, T[]>();
    for (const r of list) {
      const k = str(r[key]);
      const l = map.get(k) ?? [];
      l.push(r);
      map.set(k, l);
    }
    return map;
  };
  const columnsOf = group(columns, 't');
  const statsOf = group(stats, 'TABLE_NAME');
  const fksOf = group(fks, 't');
  const checksOf = group(checks, 't');
  const triggersOf = group(triggers, 't');

  const result: InventoryTable[] = [];
  for (const t of tables) {
    const name = str(t.name);
    const tableCollation = str(t.collation);
    const cols: InventoryColumn[] = (columnsOf.get(name) ?? []).map((col) => {
      const collation = str(col.collation);
      const type = `${str(col.type)}${collation && collation !== tableCollation ? ` COLLATE ${collation}` : ''}`;
      // MariaDB reports a missing default as the text NULL; a string default comes quoted.
      const raw = col.def === null || col.def === undefined || str(col.def) === 'NULL' ? '' : str(col.def);
      const extraText = str(col.extra).trim();
      const generation = str(col.generation);
      const parts = [raw, extraText && generation ? `${extraText} (${generation})` : extraText].filter(Boolean);
      return { name: str(col.name), type, nullable: str(col.nullable) === 'YES', ...(parts.length ? { default: parts.join(' ') } : {}) };
    });
    const indexMap = new Map<string, { unique: boolean; type: string; columns: string[]; parts: string[] }>();
    for (const s of statsOf.get(name) ?? []) {
      const indexName = str(s.INDEX_NAME);
      const entry = indexMap.get(indexName) ?? { unique: num(s.NON_UNIQUE) === 0, type: str(s.INDEX_TYPE), columns: [], parts: [] };
      const column = s.COLUMN_NAME === null || s.COLUMN_NAME === undefined ? `(${str(s.EXPRESSION)})` : str(s.COLUMN_NAME);
      entry.columns.push(column);
      entry.parts.push(`${column}${s.SUB_PART !== null && s.SUB_PART !== undefined ? `(${str(s.SUB_PART)})` : ''}${str(s.COLLATION) === 'D' ? ' DESC' : ''}`);
      indexMap.set(indexName, entry);
    }
    const indexes = [...indexMap.entries()].map(([indexName, i]) => ({
      name: indexName,
      columns: i.columns,
      unique: i.unique,
      def: `${indexName === 'PRIMARY' ? 'PRIMARY KEY' : `${i.unique ? 'UNIQUE ' : ''}KEY ${quoteIdent(indexName)}`} USING ${i.type} (${i.parts.join(', ')})`,
    }));
    const fkMap = new Map<string, { columns: string[]; refTable: string; refColumns: string[]; rules: string }>();
    for (const f of fksOf.get(name) ?? []) {
      const fkName = str(f.name);
      const refSchema = str(f.refSchema);
      const entry = fkMap.get(fkName) ?? {
        columns: [],
        refTable: refSchema === database ? str(f.refTable) : `${refSchema}.${str(f.refTable)}`,
        refColumns: [],
        rules: `ON UPDATE ${str(f.onUpdate)} ON DELETE ${str(f.onDelete)}`,
      };
      entry.columns.push(str(f.col));
      entry.refColumns.push(str(f.refCol));
      fkMap.set(fkName, entry);
    }
    const foreignKeys = [...fkMap.entries()].map(([fkName, f]) => ({ name: fkName, columns: f.columns, refTable: f.refTable, refColumns: f.refColumns }));
    const primary = indexMap.get('PRIMARY');
    const fingerprint = canonicalHash({
      type: str(t.type),
      engine: str(t.engine),
      collation: tableCollation,
      columns: cols.map((col) => [col.name, col.type, col.nullable, col.default ?? null]),
      indexes: sortedTuples(indexes.map((i) => [i.name, i.def])),
      foreignKeys: sortedTuples([...fkMap.entries()].map(([fkName, f]) => [fkName, f.columns, f.refTable, f.refColumns, f.rules])),
      checks: sortedTuples((checksOf.get(name) ?? []).map((k) => [str(k.name), str(k.clause)])),
      triggers: sortedTuples((triggersOf.get(name) ?? []).map((g) => [str(g.name), str(g.timing), str(g.manipulation), num(g.ord), unqualify(str(g.body), database)])),
    });
    const dataLength = num(t.dataLength);
    const indexLength = num(t.indexLength);
    const table: InventoryTable = {
      name,
      kind: str(t.type),
      rowsEstimate: num(t.tableRows),
      totalBytes: dataLength + indexLength,
      tableBytes: dataLength,
      indexBytes: indexLength,
      columns: cols,
      ...(primary ? { primaryKey: primary.columns } : {}),
      indexes,
      foreignKeys,
      ...(tableIds.has(name) ? { oid: tableIds.get(name) } : {}),
      fingerprint,
    };
    const exact = options.exactCounts;
    if (exact && table.rowsEstimate < exact.maxRows && str(t.type) !== 'SEQUENCE') {
      const target = `${quoteIdent(database)}.${quoteIdent(name)}`;
      const ms = Math.max(1, Math.floor(exact.timeoutMs));
      const sql = mariadb
        ? `SET STATEMENT max_statement_time = ${ms / 1000} FOR SELECT COUNT(*) AS n FROM ${target}`
        : `SELECT /*+ MAX_EXECUTION_TIME(${ms}) */ COUNT(*) AS n FROM ${target}`;
      try {
        table.exactRows = num((await rows(c, sql))[0]?.n);
      } catch (error) {
        notes.push(`${database}: no exact row count for ${name}: ${(error as Error).message}`);
      }
    }
    result.push(table);
  }

  const paramsOf = group(parameters, 'spec');
  const routineNames = routines.map((r) => {
    const params = (paramsOf.get(str(r.spec)) ?? [])
      .filter((p) => str(p.type) === str(r.type))
      .map((p) => `${str(r.type) === 'PROCEDURE' ? `${str(p.pmode)} ` : ''}${str(p.name)} ${str(p.dtd)}`);
    return `${str(r.name)}(${params.join(', ')})${str(r.type) === 'FUNCTION' ? ` RETURNS ${str(r.ret)}` : ''}`;
  });
  const schemaHash = canonicalHash({
    charset: str(schema.cs),
    collation: str(schema.co),
    tables: sortedTuples(result.map((t) => [t.name, t.fingerprint])),
    views: views.map((v) => [str(v.name), sha256(unqualify(str(v.def), database)), str(v.checkOption), str(v.sec)]),
    routines: routines.map((r, i) => [
      routineNames[i],
      str(r.type),
      str(r.det),
      str(r.dataAccess),
      str(r.sec),
      sha256(unqualify(str(r.def), database)),
    ]),
    events: events.map((e) => [str(e.name), str(e.type), str(e.iv), str(e.field), sha256(unqualify(str(e.def), database))]),
  });

  const entry: InventoryDatabase = {
    name: database,
    sizeBytes: result.reduce((n, t) => n + t.totalBytes, 0),
    tables: result,
    schemaHash,
    views: views.map((v) => str(v.name)),
    routines: routineNames,
  };

  for (const kind of MIGRATION_TABLES) {
    const table = result.find((t) => t.name === kind.table) ?? result.find((t) => t.name.toLowerCase() === kind.table.toLowerCase());
    if (!table) continue;
    entry.migrationTable = table.name;
    const name = `${quoteIdent(database)}.${quoteIdent(table.name)}`;
    const columns = table.columns.map((col) => col.name);
    try {
      const version = (await rows(c, kind.latest(name, quoteIdent, 'mysql', columns)))[0]?.version;
      if (version !== null && version !== undefined) entry.migrationVersion = str(version);
      entry.migrations = appliedOldestFirst(await rows(c, kind.applied(name, quoteIdent, 'mysql', columns)));
    } catch (error) {
      notes.push(`${database}: could not read the latest migration from ${table.name}: ${(error as Error).message}`);
    }
    break;
  }
  return entry;
}
