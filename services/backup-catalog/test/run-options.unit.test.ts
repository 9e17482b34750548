// What a backup job takes from its policy and target: the mode with exclusions, the load guard, exports, exact counts.
import { describe, expect, it } from 'vitest';
import { backupModeOf, exactCountsOf, exportsOf, loadGuardOf, postponedUntil } from '../src/backups/run-options.ts';

describe('backup mode', () => {
  it('is physical for a postgres target that may replicate, unless it is told logical or excludes anything', () => {
    expect(backupModeOf({ engine: 'postgres' }, true)).toBe('physical');
    expect(backupModeOf({ engine: 'postgres', scope: { mode: 'logical' } }, true)).toBe('logical');
    expect(backupModeOf({ engine: 'postgres', scope: { excludeData: ['sessions'] } }, true)).toBe('logical');
    expect(backupModeOf({ engine: 'postgres', scope: { mode: '', excludeTables: ['public.scratch'] } }, true)).toBe('logical');
    expect(backupModeOf({ engine: 'postgres', scope: { excludeData: [] } }, true)).toBe('physical');
    expect(backupModeOf({ engine: 'postgres' }, false)).toBe('logical');
    expect(backupModeOf({ engine: 'mysql' }, true)).toBe('logical');
  });
});

describe('load guard', () => {
  it('carries the limits set, with maxPostpones defaulting to 4, and nothing when skipped or limitless', () => {
    expect(loadGuardOf({ maxActiveConnections: 50, postponeFor: '5m' }, false)).toEqual({ loadGuard: { maxActiveConnections: 50, maxPostpones: 4 } });
    expect(loadGuardOf({ maxLongTransactionSeconds: 0, maxPostpones: 1 }, false)).toEqual({ loadGuard: { maxLongTransactionSeconds: 0, maxPostpones: 1 } });
    expect(loadGuardOf({ maxActiveConnections: 50 }, true)).toEqual({});
    expect(loadGuardOf({ maxPostpones: 3, postponeFor: '1m' }, false)).toEqual({});
    expect(loadGuardOf(undefined, false)).toEqual({});
  });

  it('postpones by postponeFor, 15 minutes by default', () => {
    const now = new Date('2026-11-27T10:00:00Z');
    expect(postponedUntil({ postponeFor: '90s' }, now).toISOString()).toBe('2026-11-27T10:01:30.000Z');
    expect(postponedUntil(undefined, now).toISOString()).toBe('2026-11-27T10:15:00.000Z');
  });
});

describe('exports and exact counts', () => {
  it('passes the queries with a statement timeout, and exact counts only when enabled, with the spec defaults', () => {
    expect(exportsOf({ queries: [{ name: 'a', sql: 'SELECT 1' }, { name: 'b', database: 'app', sql: 'SELECT 2' }] })).toEqual({
      queries: [{ name: 'a', sql: 'SELECT 1' }, { name: 'b', database: 'app', sql: 'SELECT 2' }],
      queryTimeoutMs: 300_000,
    });
    expect(exportsOf({})).toEqual({});
    expect(exactCountsOf({ enabled: true })).toEqual({ exactCounts: { maxRows: 100_000, timeoutMs: 5000 } });
    expect(exactCountsOf({ enabled: true, maxRows: 10, timeout: '250ms' })).toEqual({ exactCounts: { maxRows: 10, timeoutMs: 250 } });
    expect(exactCountsOf({ maxRows: 10 })).toEqual({});
  });
});
