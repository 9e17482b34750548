import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseBinlogText } from '../src/engines/mysql/binlog.ts';
import { binlogValue } from '../src/engines/mysql/binlog-rows.ts';
import { cutValue, maskedPreviews, RowSamples, type TableColumns } from '../src/engines/previews.ts';
import { columnsChanged } from '../src/jobs/segment-previews.ts';

/**
 * `mariadb-binlog --base64-output=decode-rows -v` of a MariaDB 10.11 binlog (ROW format) of this script on `shop`:
 * CREATE TABLE customers (id, email, name, n, d); one INSERT of 7 rows (row 1: a planted secret e-mail, a name with a
 * quote and a newline, n = -1; row 7: a name of 100 characters); UPDATE of row 2; a transaction rolled back (never in
 * the binlog); DELETE of row 1.
 */
const WORKLOAD = readFileSync(new URL('./data/binlog-rows.txt', import.meta.url), 'utf8');
const SECRET = 'planted-secret-7f3a@example.com';
const COLUMNS = ['id', 'email', 'name', 'n', 'd'];
const named: (table: string) => TableColumns = () => ({ names: COLUMNS, trusted: true });

describe('row previews of a binlog', () => {
  it('samples the first rows of each kind, before and after an update, values cut, NULL as null', () => {
    const { changes } = parseBinlogText(WORKLOAD, { rows: 3, maxValueLength: 10 });
    const previews = maskedPreviews(changes.samples!, named, []);
    expect(Object.keys(previews.tables)).toEqual(['shop.customers']);
    const table = previews.tables['shop.customers']!;
    expect(table.inserts).toEqual([
      { id: '1', email: 'planted-se…', name: "Ann O'Neil…", n: '-1', d: '2026-11-28…' },
      { id: '2', email: 'b@example.…', name: null, n: '5', d: null },
      { id: '3', email: 'c@example.…', name: 'Chloé', n: '3', d: null },
    ]);
    expect(table.updates).toEqual([{ before: { id: '2', email: 'b@example.…', name: null, n: '5', d: null }, after: { id: '2', email: 'b@example.…', name: 'Bob', n: '5', d: null } }]);
    expect(table.deletes).toEqual([{ id: '1', email: 'planted-se…', name: "Ann O'Neil…", n: '-1', d: '2026-11-28…' }]);
    expect(changes.samples!.count()).toBe(5);
  });

  it('masks every column whose name matches a mask, case-insensitively, and keeps the others in clear', () => {
    const { changes } = parseBinlogText(WORKLOAD, { rows: 5, maxValueLength: 64 });
    const previews = maskedPreviews(changes.samples!, named, ['EMAIL', '^n$']);
    const table = previews.tables['shop.customers']!;
    expect(table.inserts[0]).toEqual({ id: '1', email: '***', name: "Ann O'Neil\\x0asecond line", n: '***', d: '2026-11-28 10:00:00' });
    expect(table.inserts).toHaveLength(5);
    expect(JSON.stringify(previews)).not.toContain(SECRET);
    expect(JSON.stringify(previews)).not.toContain('example.com');
  });

  it('masks every value of a table whose columns are unknown, changed, or not those of the row image', () => {
    const { changes } = parseBinlogText(WORKLOAD, { rows: 1, maxValueLength: 64 });
    const allMasked = { '@1': '***', '@2': '***', '@3': '***', '@4': '***', '@5': '***' };
    for (const columns of [{ trusted: false }, { names: COLUMNS, trusted: false }, { names: [...COLUMNS, 'added'], trusted: true }, { names: COLUMNS.slice(0, 4), trusted: true }]) {
      const previews = maskedPreviews(changes.samples!, () => columns, []);
      expect(previews.tables['shop.customers']!.inserts).toEqual([allMasked]);
      expect(JSON.stringify(previews)).not.toContain(SECRET);
    }
  });

  it('keeps only committed rows (the rolled back insert is not in the binlog; a group cut short counts nothing)', () => {
    const { changes } = parseBinlogText(WORKLOAD, { rows: 10, maxValueLength: 64 });
    const text = JSON.stringify(maskedPreviews(changes.samples!, named, []));
    expect(text).not.toContain('rolled-back');
    expect(changes.samples!.count()).toBe(9); // 7 inserts, 1 update, 1 delete
    const cut = parseBinlogText(WORKLOAD.slice(0, WORKLOAD.indexOf('\tXid = 9')), { rows: 10, maxValueLength: 64 });
    const previews = maskedPreviews(cut.changes.samples!, named, []);
    expect(previews.tables['shop.customers']!.updates).toEqual([]);
    expect(previews.tables['shop.customers']!.inserts).toHaveLength(7);
  });

  it('reads no rows without previews', () => {
    expect(parseBinlogText(WORKLOAD).changes.samples).toBeUndefined();
  });

  it('merges samples of several looks at one file up to the limit', () => {
    const a = new RowSamples({ rows: 2, maxValueLength: 8 });
    a.add('s.t', 'inserts', new Map([[1, 'a']]));
    const b = new RowSamples({ rows: 2, maxValueLength: 8 });
    b.add('s.t', 'inserts', new Map([[1, 'b']]));
    b.add('s.t', 'inserts', new Map([[1, 'c']]));
    a.merge(b);
    expect(a.count()).toBe(2);
    expect(maskedPreviews(a, () => ({ names: ['x'], trusted: true }), []).tables['s.t']!.inserts).toEqual([{ x: 'a' }, { x: 'b' }]);
  });
});

describe('values and schema changes', () => {
  it('reads the tool\'s values', () => {
    expect(binlogValue("'it's'")).toBe("it's");
    expect(binlogValue('NULL')).toBeNull();
    expect(binlogValue("'NULL'")).toBe('NULL');
    expect(binlogValue('-5 (4294967291)')).toBe('-5');
    expect(binlogValue('12.50')).toBe('12.50');
  });

  it('cuts by characters and marks the cut', () => {
    expect(cutValue('abcdef', 6)).toBe('abcdef');
    expect(cutValue('abcdefg', 6)).toBe('abcdef…');
    expect(cutValue('ééé😀x', 4)).toBe('ééé😀…');
  });

  it('a table named by a schema statement other than its CREATE TABLE has changed columns', () => {
    expect(columnsChanged('shop.customers', ['CREATE TABLE customers (id INT)'])).toBe(false);
    expect(columnsChanged('shop.customers', ['ALTER TABLE customers RENAME COLUMN email TO contact'])).toBe(true);
    expect(columnsChanged('shop.customers', ['alter table `Customers` add x int'])).toBe(true);
    expect(columnsChanged('shop.customers', ['ALTER TABLE orders ADD y INT'])).toBe(false);
  });
});
