/**
 * Composes gateway/supergraph.graphql from the subgraphs of gateway/src/subgraphs.ts, and prints its API schema
 * (what clients see) to gateway/api-schema.graphql.
 *   node gateway/scripts/compose.ts           write both files
 *   node gateway/scripts/compose.ts --check   recompose and exit 1 when a checked-in file differs (CI)
 *   --file <path>                             another supergraph file than gateway/supergraph.graphql (the API schema is then not written)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { API_SCHEMA_PATH, CompositionError, REPO_ROOT, SUPERGRAPH_PATH, apiSchemaOf, composeSupergraph } from '../src/compose.ts';

const check = process.argv.includes('--check');
const fileFlag = process.argv.indexOf('--file');
const target = fileFlag === -1 ? SUPERGRAPH_PATH : path.resolve(process.argv[fileFlag + 1] ?? '');

let composed: string;
try {
  composed = composeSupergraph();
} catch (error) {
  console.error(error instanceof CompositionError ? error.message : error);
  process.exit(1);
}

const outputs: { file: string; text: string }[] = [{ file: target, text: composed }];
if (fileFlag === -1) outputs.push({ file: API_SCHEMA_PATH, text: apiSchemaOf(composed) });

let stale = false;
for (const { file, text } of outputs) {
  const relative = path.relative(REPO_ROOT, file);
  if (!check) {
    writeFileSync(file, text);
    console.log(`Wrote ${relative}.`);
    continue;
  }
  const current = readIfPresent(file);
  if (current === text) {
    console.log(`${relative} is up to date.`);
    continue;
  }
  stale = true;
  console.error(
    current === undefined
      ? `${relative} is missing. Run \`npm run compose\` and commit the result.`
      : `${relative} is out of date: a subgraph schema changed since it was composed. Run \`npm run compose\` and commit the result.\n${firstDifference(current, text)}`,
  );
}
if (stale) process.exit(1);

function readIfPresent(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function firstDifference(current: string, composed: string): string {
  const a = current.split('\n');
  const b = composed.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `First difference at line ${i + 1}:\n  checked in: ${a[i] ?? '(end of file)'}\n  composed:   ${b[i] ?? '(end of file)'}`;
  }
  return '';
}
