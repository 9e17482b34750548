// Selective exports' CSV: RFC 4180 quoting, NULL apart from the empty string, a header once, rows counted.
import { describe, expect, it } from 'vitest';
import { bareQuery, csvLine, csvOf, type ExportBatch } from '../src/engines/csv.ts';

async function* batches(list: ExportBatch[]): AsyncGenerator<ExportBatch> {
  yield* list;
}

describe('selective export CSV', () => {
  it('quotes only what needs it, doubles quotes, and keeps NULL apart from the empty string', () => {
    expect(csvLine(['1', 'plain', null, '', 'a,b', 'say "hi"', 'two\nlines', 'cr\r'])).toBe('1,plain,,"","a,b","say ""hi""","two\nlines","cr\r"\r\n');
  });

  it('writes the header once and counts every row across batches', async () => {
    const counted = { rows: 0 };
    const chunks: string[] = [];
    for await (const chunk of csvOf(batches([{ columns: ['id', 'note'], rows: [['1', null]] }, { columns: ['id', 'note'], rows: [['2', 'x'], ['3', '']] }, { columns: ['id', 'note'], rows: [] }]), counted)) chunks.push(chunk.toString('utf8'));
    expect(chunks.join('')).toBe('id,note\r\n1,\r\n2,x\r\n3,""\r\n');
    expect(counted.rows).toBe(3);
  });

  it('an empty result still has its header', async () => {
    const counted = { rows: 0 };
    const chunks: string[] = [];
    for await (const chunk of csvOf(batches([{ columns: ['id'], rows: [] }]), counted)) chunks.push(chunk.toString('utf8'));
    expect(chunks.join('')).toBe('id\r\n');
    expect(counted.rows).toBe(0);
  });

  it('drops the trailing semicolons a query is often written with', () => {
    expect(bareQuery('SELECT 1;\n ;  \n')).toBe('SELECT 1');
  });
});
