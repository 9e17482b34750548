import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { SchemaLines } from '../src/pages/insight/DiffParts.tsx';
import { SegmentsTable } from '../src/pages/insight/SegmentsTable.tsx';

const links = { namespace: 'default', name: 'mariadb', since: '24h', mayReadRows: true };

describe('the console\'s insight views', () => {
  it('marks added and removed schema lines by element and sign, not by colour alone', () => {
    const html = renderToStaticMarkup(createElement(SchemaLines, { lines: ['--- backup a', '+++ backup b', '   id integer NOT NULL', '+    tier text', '-  table public.scratch'] }));
    expect(html).toContain('<ins class="insight-line insight-added">+    tier text</ins>');
    expect(html).toContain('<del class="insight-line insight-removed">-  table public.scratch</del>');
    expect(html).toContain('1 line added (marked +), 1 line removed (marked -).');
  });

  it('lists segments with their time, commits and explanation, and says so when there are none', () => {
    const segment = { name: '000000010000000000000003', firstTime: '2026-11-28T10:00:00Z', lastTime: '2026-11-28T10:00:05Z', commits: 3, explanation: '1 update to shop.customers', tables: { 'shop.public.customers': { updates: 1 } }, ddl: [] };
    const html = renderToStaticMarkup(createElement(SegmentsTable, { segments: [segment], label: 'Changes by segment', links }));
    expect(html).toContain('1 update to shop.customers');
    expect(html).toContain('<td>3</td>');
    expect(html).toContain('aria-expanded="false"');
    expect(html).not.toContain('Sample rows');
    expect(renderToStaticMarkup(createElement(SegmentsTable, { segments: [], label: 'Changes by segment', links }))).toContain('No change-log segment in this stretch of time.');
  });

  it('links a segment with previews to its sample rows, with how many, and shows why another has none', () => {
    const at = { firstTime: '2026-11-28T10:00:00Z', lastTime: '2026-11-28T10:00:00Z', commits: 1, explanation: '1 insert into shop.customers' };
    const segments = [
      { ...at, name: 'mariadb-bin.000007', previewsKey: 'x/mariadb-bin.000007.zst.age.previews.age', previewRows: 4 },
      { ...at, name: 'mariadb-bin.000008', previewsError: 'the column names of shop.customers could not be read' },
      { ...at, name: 'mariadb-bin.000009', previewsKey: 'x/mariadb-bin.000009.zst.age.previews.age', previewRows: 0 },
    ];
    const html = renderToStaticMarkup(createElement(SegmentsTable, { segments, label: 'Changes by segment', links }));
    expect(html).toMatch(/<a [^>]*href="\/targets\/default\/mariadb\/segments\/mariadb-bin\.000007\/previews\?since=24h"[^>]*>Sample rows \(4\)<\/a>/);
    expect(html).toMatch(/aria-label="Sample rows \(4\) of the changes at [^"]+"/);
    expect(html).toContain('No sample rows: the column names of shop.customers could not be read');
    // Previews of no row: nothing to open.
    expect(html).not.toContain('mariadb-bin.000009/previews');
    expect(html).toContain('<span class="muted small">No sample rows</span>');
    // A viewer (below restorer) reads how many there are, without a link the API would refuse.
    const viewer = renderToStaticMarkup(createElement(SegmentsTable, { segments, label: 'Changes by segment', links: { ...links, mayReadRows: false } }));
    expect(viewer).not.toContain('<a ');
    expect(viewer).toContain('4 sample rows (the restorer role sees them)');
  });
});
