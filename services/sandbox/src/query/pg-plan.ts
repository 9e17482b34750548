/**
 * PostgreSQL: the masked-column guard. It reads `EXPLAIN (VERBOSE, FORMAT JSON)` of a statement and refuses it when a
 * masked value could reach the answer other than as a directly selected column (which the answer then shows masked).
 */

import { revealMessage } from './masks.ts';
import { quoteIdent } from './pg-catalog.ts';
import { POSTGRES_PLAN, isIdentifier, isPunct, tokenize } from './tokens.ts';
import type { Token } from './tokens.ts';
import { QueryRefused } from './types.ts';

/** A relation holding masked data: its masked columns ('all' for a materialised view built from masked columns) and every column in order. */
export interface MaskedRelation {
  masked: Set<string> | 'all';
  columns: string[];
}

export interface PlanCatalog {
  /** By `schema.name`. */
  relations: Map<string, MaskedRelation>;
  /** Names of indexes whose keys or predicate use a masked column: scanning one reveals the order of masked values. */
  maskedIndexes: Set<string>;
}

export interface PlanField {
  name: string;
  attributed: boolean;
}

export interface PlanCheck {
  plan: unknown;
  catalog: PlanCatalog;
  fields: PlanField[];
  isSelect: boolean;
}

type PlanNode = Record<string, unknown>;
type Consumer = 'opaque' | 'projecting';

interface VisitedNode {
  node: PlanNode;
  /** Whether its output only feeds a node that shows every expression it computes from it. */
  consumer: Consumer;
  /** Inside an InitPlan or SubPlan (not a CTE): its output becomes a parameter of an expression. */
  inSubplan: boolean;
  /** On the inner side of a nested loop or in a SubPlan, where it may read columns of outer rows (LATERAL, correlation). */
  correlated: boolean;
  isTop: boolean;
}

// Keys that hold names and settings, not expressions.
const METADATA_KEYS = new Set([
  'Node Type', 'Parent Relationship', 'Subplan Name', 'Relation Name', 'Schema', 'Alias', 'CTE Name', 'Index Name', 'Join Type',
  'Strategy', 'Partial Mode', 'Scan Direction', 'Operation', 'Command', 'Function Name', 'Table Function Name', 'Conflict Resolution',
  'Conflict Arbiter Indexes', 'Sampling Method', 'Output', 'Plans',
]);
const PASS_THROUGH = new Set(['Sort', 'Incremental Sort', 'Limit', 'Materialize', 'Memoize', 'Hash', 'Unique', 'Gather', 'Gather Merge', 'LockRows']);
const PROJECTING = new Set(['Aggregate', 'Group', 'WindowAgg', 'Hash Join', 'Nested Loop', 'Merge Join', 'Result', 'ProjectSet']);
const APPENDS = new Set(['Append', 'Merge Append']);
const SET_OPERATIONS = new Set(['SetOp', 'Recursive Union']);

const asNode = (value: unknown): PlanNode | undefined => (value && typeof value === 'object' && !Array.isArray(value) ? (value as PlanNode) : undefined);
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const children = (node: PlanNode): PlanNode[] => (Array.isArray(node.Plans) ? node.Plans.map(asNode).filter((n) => n !== undefined) : []);
const outputOf = (node: PlanNode): string[] => (Array.isArray(node.Output) ? node.Output.filter((o) => typeof o === 'string') : []);

function isSubplanChild(node: PlanNode): boolean {
  const relation = str(node['Parent Relationship']);
  return (relation === 'InitPlan' || relation === 'SubPlan') && !str(node['Subplan Name']).startsWith('CTE ');
}

function visit(visited: VisitedNode, into: VisitedNode[]): void {
  into.push(visited);
  const { node } = visited;
  const type = str(node['Node Type']);
  const forChildren: Consumer = PASS_THROUGH.has(type) ? visited.consumer : PROJECTING.has(type) ? 'projecting' : 'opaque';
  for (const child of children(node)) {
    const subplan = isSubplanChild(child);
    const inner = type === 'Nested Loop' && str(child['Parent Relationship']) === 'Inner';
    visit(
      {
        node: child,
        consumer: subplan ? 'opaque' : forChildren,
        inSubplan: visited.inSubplan || subplan,
        correlated: visited.correlated || subplan || inner,
        isTop: false,
      },
      into,
    );
  }
}

function subtree(root: PlanNode, into: PlanNode[] = []): PlanNode[] {
  into.push(root);
  for (const child of children(root)) subtree(child, into);
  return into;
}

/** Where masked values live in this plan: relation aliases and their masked columns, or 'all' for derived aliases carrying them. */
class AliasMap {
  readonly aliases = new Map<string, MaskedRelation>();
  readonly bareColumns = new Set<string>();

  set(alias: string, relation: MaskedRelation): boolean {
    if (this.aliases.get(alias)?.masked === 'all') return false;
    this.aliases.set(alias, relation);
    this.cache.clear();
    for (const column of relation.masked === 'all' ? relation.columns : relation.masked) this.bareColumns.add(column);
    return true;
  }

  private readonly cache = new Map<string, string[]>();

  /** Masked references (`alias.column`, `alias.*`, a bare masked column or a bare alias as a whole row) in an expression. */
  references(expression: string): string[] {
    const cached = this.cache.get(expression);
    if (cached) return cached;
    const tokens = tokenize(expression, POSTGRES_PLAN);
    const found: string[] = [];
    tokens.forEach((token, i) => {
      const reference = this.referenceAt(tokens, i, token);
      if (reference) found.push(reference);
    });
    this.cache.set(expression, found);
    return found;
  }

  private referenceAt(tokens: Token[], i: number, token: Token): string | undefined {
    if (!isIdentifier(token)) return undefined;
    const prev = tokens[i - 1];
    if (isPunct(prev, '.') || isPunct(prev, '::')) return undefined;
    const next = tokens[i + 1];
    const relation = this.aliases.get(token.value);
    if (isPunct(next, '.')) {
      const column = tokens[i + 2];
      if (!relation || !column) return undefined;
      if (isPunct(column, '*')) return `${token.value}.*`;
      if (isIdentifier(column) && (relation.masked === 'all' || relation.masked.has(column.value))) return `${token.value}.${column.value}`;
      return undefined;
    }
    if (isPunct(next, '(')) return undefined;
    if (relation) return `${token.value}.*`;
    return this.bareColumns.has(token.value) ? token.value : undefined;
  }
}

/** Strips wrapping parentheses and trailing casts: what is left of `(users.email)::text` is `users.email`. */
function stripCastsAndParens(expression: string): string {
  let text = expression.trim();
  for (;;) {
    const next = text
      .replace(/::("([^"]|"")+"|[a-z_][\w ]*)(\(\d+(,\s*\d+)?\))?(\[\])*$/i, '')
      .trim()
      .replace(/^\((.*)\)$/s, (whole, inner: string) => (balanced(inner) ? inner : whole))
      .trim();
    if (next === text) return text;
    text = next;
  }
}

function balanced(text: string): boolean {
  let depth = 0;
  for (const token of tokenize(text, POSTGRES_PLAN)) {
    if (isPunct(token, '(')) depth += 1;
    if (isPunct(token, ')')) depth -= 1;
    if (depth < 0) return false;
  }
  return depth === 0;
}

function isExactReference(expression: string): boolean {
  const tokens = tokenize(stripCastsAndParens(expression), POSTGRES_PLAN);
  if (tokens.length === 1) return isIdentifier(tokens[0]);
  return tokens.length === 3 && isIdentifier(tokens[0]) && isPunct(tokens[1], '.') && (isIdentifier(tokens[2]) || isPunct(tokens[2], '*'));
}

/** Every expression string of a node outside `Output` and the metadata keys, with the key it sits under. */
function expressionsOf(node: PlanNode): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  const collect = (key: string, value: unknown): void => {
    if (typeof value === 'string') found.push([key, value]);
    else if (Array.isArray(value)) for (const item of value) collect(key, item);
    else if (asNode(value)) for (const [k, v] of Object.entries(value as PlanNode)) if (!METADATA_KEYS.has(k)) collect(k, v);
  };
  for (const [key, value] of Object.entries(node)) if (!METADATA_KEYS.has(key)) collect(key, value);
  return found;
}

export class PlanGuard {
  private readonly nodes: VisitedNode[] = [];
  private readonly byNode = new Map<PlanNode, VisitedNode>();
  private readonly aliases = new AliasMap();
  private readonly check: PlanCheck;

  constructor(check: PlanCheck) {
    this.check = check;
    const root = asNode(asNode(Array.isArray(check.plan) ? check.plan[0] : check.plan)?.Plan);
    if (!root) throw new QueryRefused('the statement could not be checked for masked columns');
    visit({ node: root, consumer: 'opaque', inSubplan: false, correlated: false, isTop: true }, this.nodes);
    for (const visited of this.nodes) this.byNode.set(visited.node, visited);
    this.mapRelations();
    this.taintDerivedAliases();
  }

  /** Throws QueryRefused when a masked value could leave other than through a directly selected column. */
  enforce(): void {
    for (const visited of this.nodes) this.checkNode(visited);
    if (!this.anyReference()) return;
    const unattributed = this.check.fields.find((field) => !field.attributed);
    if (unattributed) throw new QueryRefused(revealMessage(`result column "${unattributed.name}" is computed in a query that reads a masked column and`));
    if (!this.check.isSelect) throw new QueryRefused(revealMessage('a statement other than SELECT that reads a masked column'));
  }

  private mapRelations(): void {
    const { relations } = this.check.catalog;
    for (const { node } of this.nodes) {
      const relation = relations.get(`${str(node.Schema)}.${str(node['Relation Name'])}`);
      const alias = str(node.Alias);
      if (relation && alias) this.aliases.set(alias, relation);
    }
    if (this.aliases.aliases.size === 0) return;
    // A VALUES list is not printed in plans: a lateral or correlated one could hold masked values unseen.
    for (const { node, correlated } of this.nodes) {
      if (correlated && str(node['Node Type']) === 'Values Scan' && str(node.Alias)) this.aliases.set(str(node.Alias), { masked: 'all', columns: [] });
    }
  }

  /** Subqueries and CTEs whose own plan reads masked values carry them under new names: every column of theirs counts. */
  private taintDerivedAliases(): void {
    for (let changed = true; changed; ) {
      changed = false;
      const tainted = new Set<string>();
      for (const visited of this.nodes) {
        const name = str(visited.node['Subplan Name']);
        if (name.startsWith('CTE ') && this.subtreeReferences(visited.node)) tainted.add(name.slice(4));
      }
      for (const { node } of this.nodes) {
        const type = str(node['Node Type']);
        const alias = str(node.Alias);
        const carries = (type === 'CTE Scan' && tainted.has(str(node['CTE Name']))) || (type === 'Subquery Scan' && children(node).some((c) => this.subtreeReferences(c)));
        if (carries && alias && this.aliases.set(alias, { masked: 'all', columns: [] })) changed = true;
      }
    }
  }

  private subtreeReferences(root: PlanNode): boolean {
    return subtree(root).some((node) => {
      const visited = this.byNode.get(node);
      return visited !== undefined && this.nodeReferences(visited);
    });
  }

  private anyReference(): boolean {
    return this.nodes.some((visited) => this.nodeReferences(visited));
  }

  private nodeReferences(visited: VisitedNode): boolean {
    if (expressionsOf(visited.node).some(([, e]) => this.aliases.references(e).length > 0)) return true;
    return this.countedOutput(visited).some((e) => this.aliases.references(e).length > 0);
  }

  /**
   * A scan that hands every column of its relation to a node that prints all it computes (count(*) over a table) does
   * not use them: such a physical target list is not a reference. Anywhere else (the result itself, a write, a
   * subquery, an append) it is.
   */
  private countedOutput({ node, consumer, isTop }: VisitedNode): string[] {
    const output = outputOf(node);
    if (isTop || consumer !== 'projecting') return output;
    const relation = this.aliases.aliases.get(str(node.Alias));
    if (!relation || relation.columns.length === 0 || !str(node['Relation Name'])) return output;
    const alias = str(node.Alias);
    const physical = output.length === relation.columns.length && output.every((o, i) => o === relation.columns[i] || o === `${alias}.${relation.columns[i]}` || o === `${quoteIdent(alias)}.${quoteIdent(relation.columns[i] ?? '')}`);
    return physical ? [] : output;
  }

  private checkNode(visited: VisitedNode): void {
    const { node } = visited;
    const type = str(node['Node Type']);
    for (const [key, expression] of expressionsOf(node)) {
      const reference = this.aliases.references(expression)[0];
      if (reference) throw new QueryRefused(revealMessage(`the ${key} of the plan (masked column ${reference})`));
    }
    const output = this.countedOutput(visited);
    for (const expression of output) {
      const reference = this.aliases.references(expression)[0];
      if (reference && !isExactReference(expression)) throw new QueryRefused(revealMessage(`an expression over masked column ${reference}`));
    }
    if (visited.inSubplan && output.some((e) => this.aliases.references(e).length > 0)) {
      throw new QueryRefused(revealMessage('a subquery used as a value or a condition that reads a masked column'));
    }
    const indexName = str(node['Index Name']);
    if (indexName && this.check.catalog.maskedIndexes.has(indexName)) {
      throw new QueryRefused(revealMessage(`the use of index ${indexName}, which orders rows by a masked column,`));
    }
    if (SET_OPERATIONS.has(type) && this.subtreeReferences(node)) throw new QueryRefused(revealMessage('a set operation (UNION, INTERSECT, EXCEPT, recursive CTE) over a masked column'));
    if (APPENDS.has(type)) this.checkAppend(node);
  }

  /** Appended rows share columns by position: a masked column may only line up with masked columns. */
  private checkAppend(node: PlanNode): void {
    const members = children(node).filter((c) => str(c['Parent Relationship']) === 'Member');
    if (!members.some((m) => this.subtreeReferences(m))) return;
    const outputs = members.map((m) => (str(m['Relation Name']) || APPENDS.has(str(m['Node Type'])) ? outputOf(m) : undefined));
    const width = Math.max(...outputs.map((o) => o?.length ?? 0));
    for (let i = 0; i < width; i += 1) {
      const kinds = new Set(outputs.map((o) => (o === undefined ? 'opaque' : this.aliases.references(o[i] ?? '').length > 0 ? 'masked' : 'plain')));
      if (kinds.size > 1 || kinds.has('opaque')) throw new QueryRefused(revealMessage('a UNION that puts a masked column and other values in one result column'));
    }
  }
}

// Functions that run SQL given as text, read files, or read the planner's statistics (which hold sample values).
const RISKY_CALL = /\b((query|table|schema|database|cursor)_to_xml\w*|ts_stat|pg_read_file|pg_read_binary_file|lo_import|dblink\w*|pg_statistic\w*|pg_stats\w*)\b/i;

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every string in a plan, one a line. */
export function planText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(planText).join('\n');
  if (value && typeof value === 'object') return Object.values(value).map(planText).join('\n');
  return '';
}

/**
 * Refuses calls that can read a masked column without the plan showing it: the database's own functions and
 * operators (checked in the statement too, since the planner folds an IMMUTABLE one into its result), and the
 * system functions in RISKY_CALL.
 */
export function refuseHiddenReads(sql: string, plan: string, userFunctions: string[], userOperators: string[]): void {
  for (const text of [sql, plan]) {
    const risky = RISKY_CALL.exec(text);
    if (risky) throw new QueryRefused(revealMessage(`${risky[1]}, which reads data the masks cannot follow,`));
  }
  for (const name of userFunctions) {
    const call = new RegExp(`(?<![\\w$])"?${escapeRegExp(name)}"?\\s*\\(`, 'i');
    if (call.test(sql) || call.test(plan)) throw new QueryRefused(revealMessage(`function ${name}, a function of this database that can read any column,`));
  }
  for (const operator of userOperators) {
    if (plan.includes(` ${operator} `) || sql.includes(operator)) throw new QueryRefused(revealMessage(`operator ${operator}, an operator of this database that can read any column,`));
  }
}
