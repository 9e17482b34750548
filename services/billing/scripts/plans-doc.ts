// Writes the plan tables into docs/billing.md between its markers, from the catalog (src/plans/catalog.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { plansMarkdown } from '../src/plans/markdown.ts';
import { PLANS_DOC_BEGIN, PLANS_DOC_END } from '../src/plans/doc-markers.ts';

const page = fileURLToPath(new URL('../../../docs/billing.md', import.meta.url));
const text = readFileSync(page, 'utf8');
const [before, rest = ''] = text.split(PLANS_DOC_BEGIN);
const after = rest.split(PLANS_DOC_END)[1] ?? '';
writeFileSync(page, `${before}${PLANS_DOC_BEGIN}\n${plansMarkdown()}\n${PLANS_DOC_END}${after}`);
console.log(`wrote the plan tables into ${page}`);
