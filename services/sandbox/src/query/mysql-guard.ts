/**
 * MySQL and MariaDB: the masked-column guard. Their EXPLAIN does not list columns, and MariaDB's result metadata names
 * a derived table rather than the column behind it, so the guard reads the statement itself: a masked column (and any
 * alias that carries one out of a derived table or CTE) may appear only as a plain item of a select list — everywhere
 * else (WHERE, ON, ORDER BY, an expression, a scalar subquery) it could reveal the value, and the statement is refused.
 */

import { revealMessage } from './masks.ts';
import { isIdentifier, isPunct, isWord } from './tokens.ts';
import type { Token } from './tokens.ts';
import { QueryRefused } from './types.ts';

export interface MysqlMaskCatalog {
  /** Lower-cased names of base-table columns that match a mask. */
  maskedColumns: Set<string>;
  /** Lower-cased names of base tables with a masked column. */
  maskedTables: Set<string>;
  /** Lower-cased names of views built from masked columns, stored routines or such views. */
  taintedViews: Set<string>;
  /** Lower-cased names of stored functions and procedures: they can read any column unseen. */
  routines: Set<string>;
}

export interface StatementAnalysis {
  /** Lower-cased names that carry masked values: the masked columns and the aliases they were given. */
  tainted: Set<string>;
  /** The statement names a masked column or expands `*` over a table with masked columns. */
  reachesMasked: boolean;
}

type ScopeKind = 'top' | 'derived' | 'expression' | 'paren';

const CLAUSE_WORDS = ['SELECT', 'FROM', 'JOIN', 'ON', 'USING', 'WHERE', 'GROUP', 'HAVING', 'ORDER', 'LIMIT', 'WINDOW', 'OVER', 'PARTITION', 'SET', 'VALUES', 'WITH', 'INTO', 'UNION', 'EXCEPT', 'INTERSECT', 'RETURNING'];
const SELECT_END = ['FROM', 'INTO', 'WHERE', 'GROUP', 'HAVING', 'ORDER', 'LIMIT', 'WINDOW', 'UNION', 'EXCEPT', 'INTERSECT', 'FOR', 'LOCK', 'PROCEDURE'];
const SELECT_MODIFIERS = ['ALL', 'DISTINCT', 'DISTINCTROW', 'HIGH_PRIORITY', 'STRAIGHT_JOIN', 'SQL_SMALL_RESULT', 'SQL_BIG_RESULT', 'SQL_BUFFER_RESULT', 'SQL_CACHE', 'SQL_NO_CACHE', 'SQL_CALC_FOUND_ROWS'];
const WRITE_WORDS = ['INSERT', 'UPDATE', 'DELETE', 'REPLACE', 'CREATE', 'ALTER', 'DROP', 'INTO', 'SET', 'TRUNCATE', 'RENAME'];
// Statements and sources that read data around the columns the masks know: dynamic SQL, files, logs, statistics.
const HIDDEN_READS = new Set([
  'PREPARE', 'EXECUTE', 'HANDLER', 'LOAD', 'LOAD_FILE', 'OUTFILE', 'DUMPFILE', 'ANALYSE', 'BINLOG', 'RELAYLOG', 'COLUMN_STATS', 'COLUMN_STATISTICS',
  'INNODB_FT_INDEX_TABLE', 'INNODB_FT_INDEX_CACHE', 'PERFORMANCE_SCHEMA', 'PROCESSLIST', 'GENERAL_LOG', 'SLOW_LOG',
]);
const CLAUSE_NAMES: Record<string, string> = {
  SELECT: 'an expression of the select list', FROM: 'the FROM clause', JOIN: 'the FROM clause', ON: 'a join condition', USING: 'a join condition',
  WHERE: 'the WHERE clause', GROUP: 'GROUP BY', HAVING: 'HAVING', ORDER: 'ORDER BY', LIMIT: 'LIMIT', WINDOW: 'a window', OVER: 'a window',
  PARTITION: 'a window', SET: 'SET', VALUES: 'VALUES', WITH: 'a WITH clause', INTO: 'INTO', RETURNING: 'RETURNING',
};

const lower = (token: Token): string => token.value.toLowerCase();

interface SelectItem {
  tokens: number[];
  /** Index of the column of a plain `[db.][table.]column [[AS] alias]` item. */
  column?: number;
  alias?: number;
  wildcard: boolean;
}

interface SelectList {
  scope: ScopeKind;
  items: SelectItem[];
  /** Names given to its columns from outside: `WITH x (a, b) AS (...)`. */
  columnList: number[];
}

/** The statement's structure as far as the guard needs it: depths, scopes, select lists and the clause of every token. */
class Structure {
  readonly depth: number[] = [];
  readonly clause: string[] = [];
  readonly scopeOf = new Map<number, ScopeKind>();
  readonly closeOf = new Map<number, number>();
  readonly selects: SelectList[] = [];

  readonly tokens: Token[];

  constructor(tokens: Token[]) {
    this.tokens = tokens;
    this.measure();
    this.tokens.forEach((token, i) => {
      if (isWord(token, 'SELECT')) this.selects.push(this.selectList(i));
    });
  }

  private measure(): void {
    const clauses: string[] = [''];
    const opens: number[] = [];
    let depth = 0;
    this.tokens.forEach((token, i) => {
      if (isPunct(token, ')')) {
        depth = Math.max(0, depth - 1);
        clauses.pop();
        const open = opens.pop();
        if (open !== undefined) this.closeOf.set(open, i);
      }
      const word = token.kind === 'word' ? token.value.toUpperCase() : '';
      if (CLAUSE_WORDS.includes(word) || word.endsWith('JOIN')) clauses[clauses.length - 1] = word.endsWith('JOIN') ? 'JOIN' : word;
      this.depth.push(depth);
      this.clause.push(clauses.at(-1) ?? '');
      if (isPunct(token, '(')) {
        opens.push(i);
        this.scopeOf.set(i, this.scopeKind(i, clauses.at(-1) ?? ''));
        depth += 1;
        clauses.push(clauses.at(-1) ?? '');
      }
    });
  }

  private scopeKind(open: number, clause: string): ScopeKind {
    const next = this.tokens[open + 1];
    if (!isWord(next, 'SELECT', 'WITH') && !isPunct(next, '(')) return 'paren';
    const prev = this.tokens[open - 1];
    if (prev === undefined) return 'top';
    if (isPunct(prev, '(')) return this.scopeOf.get(open - 1) ?? 'expression';
    if (clause === 'WITH' && isWord(prev, 'AS')) return 'derived';
    if ((clause === 'FROM' || clause === 'JOIN') && (isWord(prev, 'FROM', 'LATERAL') || isPunct(prev, ',') || (prev.kind === 'word' && prev.value.toUpperCase().endsWith('JOIN')))) return 'derived';
    return 'expression';
  }

  /** `(...) [AS] name (a, b)`: a derived table whose columns are renamed by position. */
  renamesDerivedColumns(): boolean {
    return [...this.scopeOf].some(([open, kind]) => {
      const close = this.closeOf.get(open);
      if (kind !== 'derived' || close === undefined) return false;
      const at = isWord(this.tokens[close + 1], 'AS') ? close + 2 : close + 1;
      return isIdentifier(this.tokens[at]) && !isWord(this.tokens[at], 'SELECT', 'WITH') && isPunct(this.tokens[at + 1], '(');
    });
  }

  /** The scope a token sits in: that of the innermost parenthesis around it, or the statement itself. */
  enclosingScope(index: number): { kind: ScopeKind; open: number } {
    let depth = this.depth[index] ?? 0;
    for (let i = index - 1; i >= 0 && depth > 0; i -= 1) {
      if (isPunct(this.tokens[i], '(') && (this.depth[i] ?? 0) === depth - 1) {
        const kind = this.scopeOf.get(i) ?? 'paren';
        if (kind !== 'paren') return { kind, open: i };
        depth -= 1;
      }
    }
    return { kind: 'top', open: -1 };
  }

  private selectList(select: number): SelectList {
    const depth = this.depth[select] ?? 0;
    const enclosing = this.enclosingScope(select);
    const items: SelectItem[] = [];
    let current: number[] = [];
    let i = select + 1;
    while (isWord(this.tokens[i], ...SELECT_MODIFIERS)) i += 1;
    for (; i < this.tokens.length; i += 1) {
      const token = this.tokens[i] as Token;
      const atDepth = (this.depth[i] ?? 0) === depth;
      if ((atDepth && (isWord(token, ...SELECT_END) || isPunct(token, ';'))) || (this.depth[i] ?? 0) < depth || (atDepth && isPunct(token, ')'))) break;
      if (atDepth && isPunct(token, ',')) {
        items.push(this.item(current));
        current = [];
      } else current.push(i);
    }
    if (current.length > 0) items.push(this.item(current));
    return { scope: enclosing.kind, items, columnList: enclosing.open >= 0 ? this.columnListBefore(enclosing.open) : [] };
  }

  private item(indexes: number[]): SelectItem {
    const t = indexes.map((i) => this.tokens[i]);
    const wildcard = isPunct(t.at(-1), '*') && (t.length === 1 || isPunct(t.at(-2), '.'));
    // [db .] [table .] column [[AS] alias]
    let k = 0;
    while (isIdentifier(t[k]) && isPunct(t[k + 1], '.') && k < 4) k += 2;
    if (!isIdentifier(t[k])) return { tokens: indexes, wildcard };
    const column = k;
    const rest = t.length - column - 1;
    const aliasAt = rest === 2 && isWord(t[column + 1], 'AS') ? column + 2 : rest === 1 ? column + 1 : -1;
    const alias = aliasAt >= 0 ? t[aliasAt] : undefined;
    if (rest !== 0 && !(alias && (isIdentifier(alias) || alias.kind === 'string'))) return { tokens: indexes, wildcard };
    return { tokens: indexes, column: indexes[column], ...(aliasAt >= 0 ? { alias: indexes[aliasAt] } : {}), wildcard };
  }

  /** `name (a, b) AS (` before a CTE body, `(...) AS name (a, b)` after a derived table: the names its columns get. */
  private columnListBefore(open: number): number[] {
    if (!isWord(this.tokens[open - 1], 'AS') || !isPunct(this.tokens[open - 2], ')')) return [];
    const names: number[] = [];
    for (let i = open - 3; i >= 0 && !isPunct(this.tokens[i], '('); i -= 1) if (isIdentifier(this.tokens[i])) names.push(i);
    return names.reverse();
  }
}

function refuseHiddenReads(tokens: Token[], catalog: MysqlMaskCatalog): void {
  for (const [i, token] of tokens.entries()) {
    if (!isIdentifier(token)) continue;
    const name = lower(token);
    if (token.kind === 'word' && HIDDEN_READS.has(name.toUpperCase())) throw new QueryRefused(revealMessage(`${token.value.toUpperCase()}, which reads data the masks cannot follow,`));
    if (name === 'sys' && isPunct(tokens[i + 1], '.')) throw new QueryRefused(revealMessage('the sys schema, which reads data the masks cannot follow,'));
    if (catalog.routines.has(name)) throw new QueryRefused(revealMessage(`routine ${token.value}, a stored routine that can read any column,`));
    if (catalog.taintedViews.has(name)) throw new QueryRefused(revealMessage(`view ${token.value}, which is built from a masked column,`));
  }
}

/** Marks the aliases that carry a masked column out of a select list, until no new name appears. */
function spreadTaint(structure: Structure, tainted: Set<string>): Set<number> {
  const allowed = new Set<number>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const list of structure.selects) {
      if (list.scope === 'expression' || list.scope === 'paren') continue;
      for (const index of list.columnList) allowed.add(index);
      const carriers = new Set<number>();
      list.items.forEach((item, position) => {
        if (item.column === undefined) return;
        for (const index of item.tokens) allowed.add(index);
        if (!tainted.has(lower(structure.tokens[item.column] as Token))) return;
        carriers.add(position);
        const alias = item.alias === undefined ? undefined : lower(structure.tokens[item.alias] as Token);
        if (alias && !tainted.has(alias)) {
          tainted.add(alias);
          changed = true;
        }
      });
      // A column list renames by position; when positions are unclear (`*`, a count that differs) it renames them all.
      const positional = list.columnList.length === list.items.length && !list.items.some((item) => item.wildcard);
      list.columnList.forEach((index, position) => {
        const name = lower(structure.tokens[index] as Token);
        if ((positional ? carriers.has(position) : carriers.size > 0) && !tainted.has(name)) {
          tainted.add(name);
          changed = true;
        }
      });
    }
  }
  return allowed;
}

function refuseIndirectUse(structure: Structure, tainted: Set<string>, allowed: Set<number>): void {
  structure.tokens.forEach((token, i) => {
    if (!isIdentifier(token) || !tainted.has(lower(token)) || allowed.has(i)) return;
    const where = CLAUSE_NAMES[structure.clause[i] ?? ''] ?? 'the statement';
    throw new QueryRefused(revealMessage(`column ${token.value} in ${where}`));
  });
}

function refuseByPosition(tokens: Token[]): void {
  tokens.forEach((token, i) => {
    if (!isWord(token, 'BY') || !isWord(tokens[i - 1], 'ORDER', 'GROUP')) return;
    for (let j = i + 1; j < tokens.length; j += 1) {
      const t = tokens[j];
      const startsItem = isWord(tokens[j - 1], 'BY') || isPunct(tokens[j - 1], ',');
      if (startsItem && t?.kind === 'number') throw new QueryRefused(revealMessage(`${tokens[i - 1]?.value.toUpperCase()} BY a column position`));
      if (isPunct(t, ')') || isPunct(t, ';') || isWord(t, 'LIMIT', 'HAVING', 'WINDOW', 'UNION', 'EXCEPT', 'INTERSECT', 'FOR', 'INTO', 'LOCK')) break;
    }
  });
}

function isSelectStatement(tokens: Token[]): boolean {
  const first = tokens.find((t) => !isPunct(t, '('));
  return isWord(first, 'SELECT', 'WITH', 'VALUES', 'TABLE') && !tokens.some((t) => isWord(t, ...WRITE_WORDS));
}

function refuseWithMaskedReach(structure: Structure, catalog: MysqlMaskCatalog, wildcard: boolean): void {
  const { tokens } = structure;
  if (tokens.some((t) => isWord(t, 'UNION', 'EXCEPT', 'INTERSECT'))) throw new QueryRefused(revealMessage('a set operation (UNION, EXCEPT, INTERSECT) over a masked column'));
  if (tokens.some((t) => isWord(t, 'DISTINCT', 'DISTINCTROW'))) throw new QueryRefused(revealMessage('DISTINCT over a masked column'));
  if (!isSelectStatement(tokens)) throw new QueryRefused(revealMessage('a statement other than SELECT that reads a masked column'));
  refuseByPosition(tokens);
  if ((wildcard && structure.selects.some((s) => s.columnList.length > 0)) || structure.renamesDerivedColumns()) {
    throw new QueryRefused(revealMessage('a column list that renames the columns of a derived table'));
  }
}

/** Throws QueryRefused when the statement could reveal a masked value other than through a plainly selected column. */
export function analyzeStatement(tokens: Token[], catalog: MysqlMaskCatalog): StatementAnalysis {
  refuseHiddenReads(tokens, catalog);
  const mentionsMaskedTable = tokens.some((t) => isIdentifier(t) && catalog.maskedTables.has(lower(t)));
  // A NATURAL join compares every column two tables share, masked ones included, without naming them.
  if (mentionsMaskedTable && tokens.some((t) => isWord(t, 'NATURAL'))) throw new QueryRefused(revealMessage('a NATURAL join over a table with masked columns'));
  const structure = new Structure(tokens);
  const tainted = new Set(catalog.maskedColumns);
  const allowed = spreadTaint(structure, tainted);
  refuseIndirectUse(structure, tainted, allowed);
  const namesMasked = tokens.some((t) => isIdentifier(t) && catalog.maskedColumns.has(lower(t)));
  // MySQL 8's `TABLE t` is `SELECT * FROM t`.
  const expandsAll = structure.selects.some((s) => s.items.some((item) => item.wildcard)) || isWord(tokens.find((t) => !isPunct(t, '(')), 'TABLE');
  const wildcard = expandsAll && mentionsMaskedTable;
  const reachesMasked = namesMasked || wildcard || tokens.some((t) => isIdentifier(t) && tainted.has(lower(t)));
  if (reachesMasked) refuseWithMaskedReach(structure, catalog, wildcard);
  return { tainted, reachesMasked };
}

/** Only one statement per request: a `;` may end the statement, nothing may follow it. */
export function refuseSeveralStatements(tokens: Token[]): void {
  const semicolon = tokens.findIndex((t) => isPunct(t, ';'));
  if (semicolon !== -1 && semicolon < tokens.length - 1) throw new QueryRefused('only one statement per request: remove everything after the first ";"');
}

export interface MysqlField {
  name: string;
  orgTable: string;
  orgName: string;
  schema: string;
}

/** The refusal of a result column with no source column at all (an expression, a UNION) in a statement that reads masked values. */
export function unattributedRefusal(fields: MysqlField[], analysis: StatementAnalysis): QueryRefused | undefined {
  const computed = analysis.reachesMasked ? fields.find((f) => f.orgTable === '') : undefined;
  return computed ? new QueryRefused(revealMessage(`result column "${computed.name}" is computed in a query that reads a masked column and`)) : undefined;
}

/**
 * Masked result columns: those from a masked column of a base table, and those whose source or output name carries
 * masked values in this statement (MariaDB names a derived table and its alias as the source, not the column behind).
 */
export function maskedFields(fields: MysqlField[], analysis: StatementAnalysis, baseColumnMasked: (field: MysqlField) => boolean): Set<number> {
  const masked = new Set<number>();
  fields.forEach((field, i) => {
    const carries = analysis.tainted.has(field.orgName.toLowerCase()) || analysis.tainted.has(field.name.toLowerCase());
    if (baseColumnMasked(field) || carries) masked.add(i);
  });
  return masked;
}
