import { describe, expect, it } from 'vitest';
import { renderTextTable } from '../src/query/index.ts';

describe('renderTextTable', () => {
  it('aligns columns to their widest value, with a header, a separator and a row count', () => {
    const text = renderTextTable({
      columns: ['id', 'email', 'note'],
      rows: [
        ['1', '***', ''],
        ['22', '***', 'NULL'],
      ],
      nulls: [[0, 2]],
      truncated: false,
      ms: 3,
    });
    expect(text).toBe([' id | email | note', '----+-------+------', ' 1  | ***   |', ' 22 | ***   | NULL', '(2 rows)', ''].join('\n'));
  });

  it('says "1 row" and tells when the rows were cut at the limit', () => {
    expect(renderTextTable({ columns: ['n'], rows: [['7']], truncated: false, ms: 0 })).toBe(' n\n---\n 7\n(1 row)\n');
    const cut = renderTextTable({ columns: ['i'], rows: [['1'], ['2']], truncated: true, ms: 0 });
    expect(cut.trimEnd().split('\n').slice(-2)).toEqual(['(2 rows)', '(truncated at 2 rows)']);
  });

  it('prints an empty result with its header and (0 rows)', () => {
    expect(renderTextTable({ columns: ['long_name'], rows: [], truncated: false, ms: 0 })).toBe(' long_name\n-----------\n(0 rows)\n');
  });

  it('prints the command tag and the affected count of a statement without columns', () => {
    expect(renderTextTable({ columns: [], rows: [], truncated: false, ms: 1, command: 'INSERT', affected: 3 })).toBe('INSERT 3\n');
    expect(renderTextTable({ columns: [], rows: [], truncated: false, ms: 1, command: 'CREATE TABLE' })).toBe('CREATE TABLE\n');
  });

  it('keeps a multi-line cell on one line so the columns stay aligned', () => {
    const text = renderTextTable({ columns: ['a', 'b'], rows: [['x\ny', 'z']], truncated: false, ms: 0 });
    expect(text.split('\n')[2]).toBe(' x\\ny | z');
  });
});
