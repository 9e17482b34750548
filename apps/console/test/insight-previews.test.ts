import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { PreviewValue, TablePreviewsSection } from '../src/pages/insight/PreviewTables.tsx';
import { changed, columnsOf, leavesColumnsOut, previewsPath, rowCount, tablePreviewsOf } from '../src/pages/insight/previews-model.ts';

describe('the console\'s sample rows', () => {
  it('reads the open `tables` of previews by table name, keeping rows only (text and null values)', () => {
    const tables = tablePreviewsOf({
      'shop.orders': { inserts: [{ id: '7', total: '12.50' }], updates: [], deletes: [] },
      'shop.customers': { inserts: [{ id: '1', email: '***', note: null, odd: 3 }, 'not a row'], updates: [{ before: { id: '2', name: 'Bo' }, after: { id: '2', name: 'Bo!' } }, { before: { id: '3' } }], deletes: 'nope' },
      'shop.broken': null,
    });
    expect(tables).toEqual([
      { table: 'shop.broken', inserts: [], updates: [], deletes: [] },
      { table: 'shop.customers', inserts: [{ id: '1', email: '***', note: null }], updates: [{ before: { id: '2', name: 'Bo' }, after: { id: '2', name: 'Bo!' } }], deletes: [] },
      { table: 'shop.orders', inserts: [{ id: '7', total: '12.50' }], updates: [], deletes: [] },
    ]);
    expect(tables.map(rowCount)).toEqual([0, 2, 1]);
    expect(tablePreviewsOf(undefined)).toEqual([]);
    expect(tablePreviewsOf([])).toEqual([]);
  });

  it('lists the columns of rows in the order they first appear, and tells changed values, masked ones unchanged', () => {
    expect(columnsOf([{ id: '1', name: 'a' }, { id: '2', email: '***' }])).toEqual(['id', 'name', 'email']);
    const update = { before: { id: '2', name: 'Bo', email: '***', note: null, tier: '***' }, after: { id: '2', name: 'Bo!', email: '***', note: 'NULL', tier: 'pro' } };
    expect(['id', 'name', 'email', 'note', 'tier'].map((c) => changed(update, c))).toEqual([false, true, false, true, true]);
  });

  it('draws masked, SQL NULL and empty text apart from any text, with words for screen readers', () => {
    const html = (value: string | null) => renderToStaticMarkup(createElement(PreviewValue, { value }));
    expect(html('***')).toBe('<span class="preview-masked">masked<span class="visually-hidden"> (hidden by the target&#x27;s mask)</span></span>');
    expect(html(null)).toBe('<span class="preview-null"><span class="visually-hidden">SQL </span>NULL</span>');
    expect(html('NULL')).toBe('<span class="preview-text">NULL</span>');
    expect(html('')).toContain('empty text');
  });

  it('shows a table\'s rows under its name, an update as the row before and after with the changed value marked', () => {
    const html = renderToStaticMarkup(createElement(TablePreviewsSection, {
      previews: { table: 'shop.customers', inserts: [{ id: '1', email: '***' }], updates: [{ before: { id: '2', name: 'Bo', email: '***' }, after: { id: '2', name: 'Bo!', email: '***' } }], deletes: [] },
    }));
    expect(html).toMatch(/<h2 id="[^"]+"><span class="insight-name">shop.<wbr\/>customers<\/span><\/h2>/);
    expect(html).toContain('Sampled: 1 inserted row, 1 updated row, 0 deleted rows.');
    expect(html).toContain('<table class="table insight-table preview-table" aria-label="Inserted rows of shop.customers">');
    expect(html).toContain('<del><span class="preview-text">Bo</span></del>');
    expect(html).toContain('<ins><span class="preview-text">Bo!</span></ins>');
    expect(html).not.toContain('Deleted rows');
  });

  it('shows a Postgres old row the server did not log whole as "not logged", never as NULL nor as changed', () => {
    const update = { before: { id: '2' }, after: { id: '3', name: 'Grace', email: '***' } };
    expect(['id', 'name', 'email'].map((c) => changed(update, c))).toEqual([true, false, false]);
    expect(leavesColumnsOut([update.before], ['id', 'name', 'email'])).toBe(true);
    expect(leavesColumnsOut([update.after], ['id', 'name', 'email'])).toBe(false);
    const html = renderToStaticMarkup(createElement(TablePreviewsSection, { previews: { table: 'shop.public.customers', inserts: [], updates: [{ before: {}, after: { id: '1', name: 'Ann' } }], deletes: [] } }));
    expect(html).toContain('not logged');
    expect(html).toContain('REPLICA IDENTITY FULL');
    expect(html).not.toContain('preview-null');
    expect(html).not.toContain('<del>');
  });

  it('builds the address of a segment\'s sample rows with the changes it leads back to', () => {
    expect(previewsPath('default', 'mariadb', 'mariadb-bin.000007')).toBe('/targets/default/mariadb/segments/mariadb-bin.000007/previews');
    expect(previewsPath('default', 'my db', 'a/b', { since: '2026-11-28T18:00:00Z', until: '2026-11-28T19:00:00Z' })).toBe('/targets/default/my%20db/segments/a%2Fb/previews?since=2026-11-28T18%3A00%3A00Z&until=2026-11-28T19%3A00%3A00Z');
  });
});
