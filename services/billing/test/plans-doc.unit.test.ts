// docs/billing.md shows the plans as the catalog holds them (its tables are written by scripts/plans-doc.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PLANS_DOC_BEGIN, PLANS_DOC_END } from '../src/plans/doc-markers.ts';
import { plansMarkdown } from '../src/plans/markdown.ts';

describe('docs/billing.md', () => {
  it('holds the plan tables written from the catalog (npm run --workspace @sigil/billing plans:doc)', () => {
    const page = readFileSync(new URL('../../../docs/billing.md', import.meta.url), 'utf8');
    const shown = page.split(PLANS_DOC_BEGIN)[1]?.split(PLANS_DOC_END)[0]?.trim();
    expect(shown).toBe(plansMarkdown());
    expect(shown).toContain('| Platform (`platform`) | $199 | 2,000 | $0.08 up to 10,000, $0.05 up to 50,000, $0.03 each beyond 50,000 |');
  });
});
