/**
 * SCIM filters (RFC 7644 §3.4.2.2) as database queries. SCIMMY parses a filter into a list of alternatives (OR), each
 * an object of attribute → comparison (AND). The comparisons identity providers send are equality on an identifying
 * attribute (Okta and Entra: `userName eq "..."`, `externalId eq`, groups `displayName eq`, Entra's
 * `id eq "..." and members[value eq "..."]`): those become a `where`. Anything else is answered by matching the
 * organization's resources in memory with SCIMMY's own matcher (bounded by IN_MEMORY_FILTER_LIMIT).
 */
import type { Prisma } from '../generated/prisma/client.ts';

/** The most resources a filter that is not a plain equality is evaluated over. */
export const IN_MEMORY_FILTER_LIMIT = 5000;

type Comparison = [string, unknown];
type Expression = Record<string, unknown>;

/** `["eq", value]` when the comparison is a single equality, else undefined. */
function equality(value: unknown): unknown {
  if (!Array.isArray(value) || value.length !== 2 || value[0] !== 'eq') return undefined;
  const operand = (value as Comparison)[1];
  return typeof operand === 'string' || typeof operand === 'boolean' ? operand : undefined;
}

function entries(expression: Expression): [string, unknown][] {
  return Object.entries(expression).map(([key, value]) => [key.toLowerCase(), value]);
}

function userCondition(key: string, value: unknown): Prisma.ScimUserWhereInput | undefined {
  if (key === 'emails' && value && typeof value === 'object' && !Array.isArray(value)) {
    const inner = entries(value as Expression);
    const [only] = inner;
    if (inner.length !== 1 || !only || only[0] !== 'value') return undefined;
    const operand = equality(only[1]);
    return typeof operand === 'string' ? { email: operand.trim().toLowerCase() } : undefined;
  }
  const operand = equality(value);
  if (operand === undefined) return undefined;
  if (key === 'id' && typeof operand === 'string') return { id: operand };
  if (key === 'username' && typeof operand === 'string') return { userNameKey: operand.toLowerCase() };
  if (key === 'externalid' && typeof operand === 'string') return { externalId: operand };
  if (key === 'active' && typeof operand === 'boolean') return { active: operand };
  return undefined;
}

function groupCondition(key: string, value: unknown): Prisma.ScimGroupWhereInput | undefined {
  if (key === 'members' && value && typeof value === 'object' && !Array.isArray(value)) {
    const inner = entries(value as Expression);
    const [only] = inner;
    if (inner.length !== 1 || !only || only[0] !== 'value') return undefined;
    const operand = equality(only[1]);
    return typeof operand === 'string' ? { members: { some: { scimUserId: operand } } } : undefined;
  }
  const operand = equality(value);
  if (typeof operand !== 'string') return undefined;
  if (key === 'id') return { id: operand };
  if (key === 'displayname') return { displayName: { equals: operand, mode: 'insensitive' } };
  if (key === 'externalid') return { externalId: operand };
  return undefined;
}

function toWhere<W>(filter: readonly Expression[], condition: (key: string, value: unknown) => W | undefined): { OR: { AND: W[] }[] } | undefined {
  const alternatives: { AND: W[] }[] = [];
  for (const expression of filter) {
    const conditions: W[] = [];
    for (const [key, value] of entries(expression)) {
      const where = condition(key, value);
      if (!where) return undefined;
      conditions.push(where);
    }
    if (conditions.length === 0) return undefined;
    alternatives.push({ AND: conditions });
  }
  return alternatives.length ? { OR: alternatives } : undefined;
}

/** The `where` of a Users filter, or undefined when it has to be matched in memory. */
export function userFilterWhere(filter: readonly Expression[]): Prisma.ScimUserWhereInput | undefined {
  return toWhere(filter, userCondition);
}

/** The `where` of a Groups filter, or undefined when it has to be matched in memory. */
export function groupFilterWhere(filter: readonly Expression[]): Prisma.ScimGroupWhereInput | undefined {
  return toWhere(filter, groupCondition);
}
