import { describe, expect, it } from 'vitest';
import { changesPath, columnChangeRows, diffPath, lineKind, percent, signed, tableCountsOf } from '../src/pages/insight/insight-model.ts';

describe('the console\'s insight model', () => {
  it('reads a segment\'s open `tables` into counts by table, missing counts as 0 and odd values ignored', () => {
    expect(tableCountsOf({ 'public.orders': { inserts: 12 }, 'public.customers': { updates: 1204, deletes: 1, truncates: 0 }, 'public.odd': null })).toEqual([
      { table: 'public.customers', inserts: 0, updates: 1204, deletes: 1, truncates: 0 },
      { table: 'public.odd', inserts: 0, updates: 0, deletes: 0, truncates: 0 },
      { table: 'public.orders', inserts: 12, updates: 0, deletes: 0, truncates: 0 },
    ]);
    expect(tableCountsOf(undefined)).toEqual([]);
    expect(tableCountsOf('nope')).toEqual([]);
  });

  it('classifies the lines of a unified schema diff', () => {
    expect(['--- backup a', '+++ backup b', '@@ -2,5 +2,6 @@', "+    tier text NOT NULL DEFAULT 'free'::text", '-  table public.scratch', '   id integer'].map(lineKind)).toEqual(['header', 'header', 'header', 'added', 'removed', 'same']);
  });

  it('lists each kind of column change of each table as a row, in a fixed order, skipping what did not change', () => {
    expect(columnChangeRows([
      { table: 'public.customers', added: ['tier'], removed: [], typeChanged: [], nullabilityChanged: [], defaultChanged: [] },
      { table: 'public.documents', nullabilityChanged: ['title: NOT NULL → NULL'], indexDropped: ['documents_title_idx'] },
    ])).toEqual([
      { table: 'public.customers', change: 'Columns added', items: ['tier'] },
      { table: 'public.documents', change: 'Nullability changed', items: ['title: NOT NULL → NULL'] },
      { table: 'public.documents', change: 'Indexes dropped', items: ['documents_title_idx'] },
    ]);
  });

  it('writes row changes in percent, signed, and "new" for a table that had no rows', () => {
    expect(percent(3, 4, 33.33)).toBe('+33.3 %');
    expect(percent(4, 2, undefined)).toBe('−50 %');
    expect(percent(5, 5, 0)).toBe('0 %');
    expect(percent(0, 7, undefined)).toBe('new');
    expect(percent(0, 0, undefined)).toBe('0 %');
    expect(signed(0, String)).toBe('no change');
    expect(signed(-5, String)).toBe('−5');
    expect(signed(5, String)).toBe('+5');
  });

  it('builds the addresses of a diff and of changes, escaping what needs it', () => {
    expect(diffPath('default', 'postgres', 'bk 1', 'bk2')).toBe('/targets/default/postgres/diff/bk%201/bk2');
    expect(changesPath('default', 'postgres', '2026-11-28T18:00:00.000Z', '2026-11-28T19:00:00.000Z')).toBe('/targets/default/postgres/changes?since=2026-11-28T18%3A00%3A00.000Z&until=2026-11-28T19%3A00%3A00.000Z');
  });
});
