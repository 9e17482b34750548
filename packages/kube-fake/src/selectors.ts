/** Label selectors (`a=b,c!=d,e in (x,y),f notin (z),g,!h`) and field selectors on dotted paths. */
import { badRequest } from './status.ts';

type Requirement = (labels: Record<string, string>) => boolean;
export type Selector = (object: { metadata?: { labels?: Record<string, string> } }) => boolean;

/** Splits on commas outside parentheses. */
function clauses(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else current += char;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

function requirement(clause: string): Requirement {
  const set = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(clause);
  if (set) {
    const [, key, operator, values] = set as unknown as [string, string, string, string];
    const allowed = values.split(',').map((v) => v.trim());
    return operator === 'in' ? (labels) => key in labels && allowed.includes(labels[key]!) : (labels) => !(key in labels) || !allowed.includes(labels[key]!);
  }
  const comparison = /^([^\s!=]+)\s*(==|=|!=)\s*([^\s,]*)$/.exec(clause);
  if (comparison) {
    const [, key, operator, value] = comparison as unknown as [string, string, string, string];
    return operator === '!=' ? (labels) => labels[key] !== value : (labels) => labels[key] === value;
  }
  const exists = /^(!?)([^\s!=()]+)$/.exec(clause);
  if (exists) return exists[1] ? (labels) => !(exists[2]! in labels) : (labels) => exists[2]! in labels;
  throw badRequest(`unable to parse requirement: ${clause}`);
}

export function labelSelector(text: string | null): Selector {
  if (!text) return () => true;
  const requirements = clauses(text).map(requirement);
  return (object) => requirements.every((matches) => matches(object.metadata?.labels ?? {}));
}

function valueAt(object: unknown, path: string): string {
  let value: unknown = object;
  for (const key of path.split('.')) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return value === undefined || value === null ? '' : String(value);
}

export function fieldSelector(text: string | null): Selector {
  if (!text) return () => true;
  const requirements = clauses(text).map((clause) => {
    const match = /^([^\s!=]+)\s*(==|=|!=)\s*(.*)$/.exec(clause);
    if (!match) throw badRequest(`invalid field selector: ${clause}`);
    const [, path, operator, value] = match as unknown as [string, string, string, string];
    return (object: unknown) => (valueAt(object, path) === value) === (operator !== '!=');
  });
  return (object) => requirements.every((matches) => matches(object));
}
