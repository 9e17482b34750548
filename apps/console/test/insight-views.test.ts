import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ApiError } from '@sigil/web-ui';
import { SchemaLines } from '../src/pages/insight/DiffParts.tsx';
import { NotAvailableYet, SegmentsTable } from '../src/pages/insight/SegmentsTable.tsx';

describe('the console\'s insight views', () => {
  it('shows the API\'s 501 as a notice naming what is not available, in the API\'s words', () => {
    const error = new ApiError({ title: 'Not implemented', status: 501, detail: 'The backup-catalog service does not implement getTargetChanges yet.' });
    const html = renderToStaticMarkup(createElement(NotAvailableYet, { what: 'Change summaries', error }));
    expect(html).toBe('<div class="alert alert-info" role="note"><strong>Change summaries are not available yet.</strong> The console API answered: The backup-catalog service does not implement getTargetChanges yet.</div>');
  });

  it('marks added and removed schema lines by element and sign, not by colour alone', () => {
    const html = renderToStaticMarkup(createElement(SchemaLines, { lines: ['--- backup a', '+++ backup b', '   id integer NOT NULL', '+    tier text', '-  table public.scratch'] }));
    expect(html).toContain('<ins class="insight-line insight-added">+    tier text</ins>');
    expect(html).toContain('<del class="insight-line insight-removed">-  table public.scratch</del>');
    expect(html).toContain('1 line added (marked +), 1 line removed (marked -).');
  });

  it('lists segments with their time, commits and explanation, and says so when there are none', () => {
    const segment = { name: '000000010000000000000003', firstTime: '2026-11-28T10:00:00Z', lastTime: '2026-11-28T10:00:05Z', commits: 3, explanation: '1 update to shop.customers', tables: { 'shop.public.customers': { updates: 1 } }, ddl: [] };
    const html = renderToStaticMarkup(createElement(SegmentsTable, { segments: [segment], label: 'Changes by segment' }));
    expect(html).toContain('1 update to shop.customers');
    expect(html).toContain('<td>3</td>');
    expect(html).toContain('aria-expanded="false"');
    expect(renderToStaticMarkup(createElement(SegmentsTable, { segments: [], label: 'Changes by segment' }))).toContain('No change-log segment in this stretch of time.');
  });
});
