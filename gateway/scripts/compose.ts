/**
 * Composes gateway/supergraph.graphql from the subgraphs of gateway/src/subgraphs.ts.
 *   node gateway/scripts/compose.ts           write the file
 *   node gateway/scripts/compose.ts --check   recompose and exit 1 when the checked-in file differs (CI)
 *   --file <path>                             another supergraph file than gateway/supergraph.graphql
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CompositionError, REPO_ROOT, SUPERGRAPH_PATH, composeSupergraph } from '../src/compose.ts';

const check = process.argv.includes('--check');
const fileFlag = process.argv.indexOf('--file');
const target = fileFlag === -1 ? SUPERGRAPH_PATH : path.resolve(process.argv[fileFlag + 1] ?? '');
const relative = path.relative(REPO_ROOT, target);

let composed: string;
try {
  composed = composeSupergraph();
} catch (error) {
  console.error(error instanceof CompositionError ? error.message : error);
  process.exit(1);
}

if (check) {
  let current: string | undefined;
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === composed) {
    console.log(`${relative} is up to date.`);
  } else {
    console.error(
      current === undefined
        ? `${relative} is missing. Run \`npm run compose\` and commit the result.`
        : `${relative} is out of date: a subgraph schema changed since it was composed. Run \`npm run compose\` and commit the result.\n${firstDifference(current, composed)}`,
    );
    process.exit(1);
  }
} else {
  writeFileSync(target, composed);
  console.log(`Wrote ${relative}.`);
}

function firstDifference(current: string, composed: string): string {
  const a = current.split('\n');
  const b = composed.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `First difference at line ${i + 1}:\n  checked in: ${a[i] ?? '(end of file)'}\n  composed:   ${b[i] ?? '(end of file)'}`;
  }
  return '';
}
