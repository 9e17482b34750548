import { GraphQLError } from '@sigil/kit/graphql';
import type { TargetFilters } from '../console/targets.ts';

const badInput = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

/** A list's limit, refused (BAD_USER_INPUT) outside 1..max as the console API's bounds. */
export function limitOf(limit: number, max = 1000): number {
  if (limit < 1 || limit > max) throw badInput(`limit must be between 1 and ${max}.`);
  return limit;
}

/** An optional RFC 3339 argument. */
export function timeArg(name: string, value: string | null | undefined): Date | undefined {
  if (value === null || value === undefined) return undefined;
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) throw badInput(`${name}: "${value}" is not an RFC 3339 time.`);
  return time;
}

/** A time range's bounds, `from` before `to` (which defaults to `now`). */
export function rangeArgs(args: { from?: string | null; to?: string | null }, now: Date): { from?: Date; to?: Date } {
  const from = timeArg('from', args.from);
  const to = timeArg('to', args.to);
  if (from && from >= (to ?? now)) throw badInput(`from must lie before ${to ? 'to' : 'now'}.`);
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

export function countArg(name: string, value: number, min: number, max: number): number {
  if (value < min || value > max) throw badInput(`${name} must be between ${min} and ${max}.`);
  return value;
}

export function filtersOf(args: Record<string, string | null | undefined>): TargetFilters {
  return Object.fromEntries(Object.entries(args).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}
