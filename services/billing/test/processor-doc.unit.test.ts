/** docs/billing.md's table of the processor's prices says what the adapter looks up: a price change shows up here. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { processorPriceSpecs } from '../src/processor/price-catalog.ts';

const doc = readFileSync(path.resolve(import.meta.dirname, '../../../docs/billing.md'), 'utf8');
const section = doc.slice(doc.indexOf('## What the processor adapter sends'), doc.indexOf('## Left (issue 28)'));
const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
const count = (n: number) => n.toLocaleString('en-US');

describe('"What the processor adapter sends"', () => {
  it('lists every price with its kind, meter and amounts, and no other', () => {
    const rows = section.split('\n').filter((line) => line.startsWith('| `sigil_'));
    expect(rows.map((row) => /^\| `([a-z_]+)`/.exec(row)![1]).sort()).toEqual(processorPriceSpecs().map((spec) => spec.lookupKey).sort());
    for (const spec of processorPriceSpecs()) {
      const row = rows.find((line) => line.startsWith(`| \`${spec.lookupKey}\` |`))!;
      expect(row, spec.lookupKey).toContain(spec.usage === 'licensed' ? '| licensed |' : `metered, meter \`${spec.meter}\``);
      const amounts = spec.tiers ? spec.tiers.flatMap((tier) => [dollars(tier.unitAmount), ...(tier.upTo === null ? [] : [count(tier.upTo)])]) : [dollars(spec.unitAmount!)];
      for (const amount of amounts) expect(row, spec.lookupKey).toContain(amount);
    }
  });
});
