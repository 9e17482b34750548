/**
 * The changes of a binlog in ROW format, from `mariadb-binlog --base64-output=decode-rows` (with `-v` when previews
 * are on: the row images are then printed too, and sampled by binlog-rows.ts): Table_map events name the table
 * behind a table id, each Write/Update/Delete_rows event is followed by `# Number of rows: N`, and the Query events of DDL groups carry their
 * statement exactly. Counts of a GTID group are kept only once the group is complete (its commit is in the file).
 */
import { ChangeCounts } from '../change-summary.ts';
import { RowSamples } from '../previews.ts';
import { binlogRowsReader } from './binlog-rows.ts';

const TABLE_MAP = /^Table_map: `((?:[^`]|``)+)`\.`((?:[^`]|``)+)` mapped to number (\d+)/;
const ROWS = /^(Write|Update|Delete)_rows(?:_v1|_compressed(?:_v1)?)?: table id (\d+)/;
const ROW_COUNT = /^# Number of rows: (\d+)/;
const USE = /^use `((?:[^`]|``)+)`\/\*!\*\/;$/;
/** What ends a statement in the tool's output. */
const DELIMITER = '/*!*/;';
const TRANSACTION_CONTROL = /^(?:BEGIN|COMMIT|ROLLBACK|START\s+TRANSACTION|XA\s|SAVEPOINT|RELEASE\s)/i;
const TRUNCATE = /^TRUNCATE\s+(?:TABLE\s+)?(`(?:[^`]|``)+`|[\w$]+)(?:\s*\.\s*(`(?:[^`]|``)+`|[\w$]+))?/i;

const KIND = { Write: 'inserts', Update: 'updates', Delete: 'deletes' } as const;

const unquote = (name: string) => (name.startsWith('`') ? name.slice(1, -1).replaceAll('``', '`') : name);

export interface BinlogChanges {
  tables: ChangeCounts;
  ddl: string[];
  /** The database each DDL statement ran in (its `use`; '' when none was set), in the order of `ddl`. */
  ddlIn: string[];
  /** Sample rows of the committed transactions, when previews are on. */
  samples?: RowSamples;
}

/** Reads the events of a binlog's text a line at a time; `commit` and `discard` end the GTID group being read. */
export function binlogChangesReader(previews?: ConstructorParameters<typeof RowSamples>[0]) {
  const samplesOf = () => (previews ? { samples: new RowSamples(previews) } : {});
  const done: BinlogChanges = { tables: new ChangeCounts(), ddl: [], ddlIn: [], ...samplesOf() };
  let group: BinlogChanges = { tables: new ChangeCounts(), ddl: [], ddlIn: [], ...samplesOf() };
  const rowImages = binlogRowsReader(() => group.samples!);
  const tableIds = new Map<string, string>();
  let database: string | undefined;
  let rowsOf: { table: string; kind: (typeof KIND)[keyof typeof KIND] } | undefined;
  /** The statement of the Query event being read, and whether its group is a DDL one. */
  let statement: string[] | undefined;
  let ddlGroup = false;
  /** The statement being read belongs to a group already complete (a DDL group ends at its Query event's header). */
  let statementCommitted = false;

  const endStatement = () => {
    const text = statement?.join('\n').trim();
    const into = statementCommitted ? done : group;
    statement = undefined;
    statementCommitted = false;
    if (!text || TRANSACTION_CONTROL.test(text)) return;
    const truncate = TRUNCATE.exec(text);
    if (truncate?.[1]) {
      const [schema, table] = truncate[2] ? [unquote(truncate[1]), unquote(truncate[2])] : [database ?? '', unquote(truncate[1])];
      into.tables.add(`${schema}.${table}`, 'truncates', 1);
    } else if (ddlGroup) {
      into.ddl.push(text);
      into.ddlIn.push(database ?? '');
    }
  };

  return {
    /** An event header; `what` is what follows the header's tab (`Table_map: …`, `Query	thread_id=…`, `GTID 0-1-5 ddl`). */
    event(what: string): void {
      if (statement) endStatement();
      rowImages.end();
      rowsOf = undefined;
      if (/^GTID /.test(what)) ddlGroup = /\bddl\b/.test(what);
      const map = TABLE_MAP.exec(what);
      if (map?.[1] && map[2] && map[3]) tableIds.set(map[3], `${map[1].replaceAll('``', '`')}.${map[2].replaceAll('``', '`')}`);
      const rows = ROWS.exec(what);
      const table = rows?.[2] ? tableIds.get(rows[2]) : undefined;
      if (rows?.[1] && table) rowsOf = { table, kind: KIND[rows[1] as keyof typeof KIND] };
      if (/^Query\b/.test(what)) statement = [];
    },
    /** A line that is not an event header. */
    text(line: string): void {
      if (group.samples && rowsOf && line.startsWith('### ')) {
        rowImages.line(line, rowsOf.table, rowsOf.kind);
        return;
      }
      const count = ROW_COUNT.exec(line);
      if (count?.[1] && rowsOf) {
        rowImages.end();
        group.tables.add(rowsOf.table, rowsOf.kind, Number(count[1]));
        rowsOf = undefined;
        return;
      }
      if (!statement) return;
      const use = USE.exec(line);
      if (use?.[1]) database = use[1].replaceAll('``', '`');
      else if (line === DELIMITER) endStatement();
      // Session settings the tool prints before the statement end with the delimiter on their own line.
      else if (!line.endsWith(DELIMITER)) statement.push(line);
    },
    /** The group read so far is complete: its changes count. */
    commit(): void {
      if (statement) statementCommitted = true;
      rowImages.end();
      done.tables.merge(group.tables);
      done.ddl.push(...group.ddl);
      done.ddlIn.push(...group.ddlIn);
      if (group.samples) done.samples?.merge(group.samples);
      group = { tables: new ChangeCounts(), ddl: [], ddlIn: [], ...samplesOf() };
    },
    result(): BinlogChanges {
      if (statement && statementCommitted) endStatement();
      return { tables: done.tables.clone(), ddl: [...done.ddl], ddlIn: [...done.ddlIn], ...(done.samples ? { samples: done.samples.clone() } : {}) };
    },
  };
}

/**
 * The changes of the target's databases only (`databases`; none, or `*`: every database): the binlog is the whole
 * server's. Tables are `database.table`; a DDL statement counts where it ran (its `use`), or when no database was set.
 */
export function changesIn(changes: BinlogChanges, databases: string[] | undefined): BinlogChanges {
  if (!databases?.length || databases.includes('*')) return changes;
  const wanted = new Set(databases);
  const ours = (table: string) => wanted.has(table.slice(0, table.indexOf('.')));
  const tables = new ChangeCounts();
  for (const [table, counts] of changes.tables.tables) if (ours(table)) for (const kind of ['inserts', 'updates', 'deletes', 'truncates'] as const) if (counts[kind]) tables.add(table, kind, counts[kind]);
  const keep = changes.ddl.map((_, i) => changes.ddlIn[i] === '' || wanted.has(changes.ddlIn[i]!));
  let samples: RowSamples | undefined;
  if (changes.samples) {
    samples = new RowSamples(changes.samples.settings);
    for (const [table, rows] of changes.samples.tables) if (ours(table)) samples.tables.set(table, rows);
  }
  return { tables, ddl: changes.ddl.filter((_, i) => keep[i]), ddlIn: changes.ddlIn.filter((_, i) => keep[i]), ...(samples ? { samples } : {}) };
}
