/**
 * Renders the Kubernetes manifests of an overlay (infra/k8s/src) as multi-document YAML, one file per apply step, and
 * the settings tables of docs/kubernetes.md.
 *
 *   node infra/k8s/scripts/render.ts                         both overlays into infra/k8s/rendered/<overlay>/, and the doc
 *   node infra/k8s/scripts/render.ts --overlay production --out /tmp/prod
 *   node infra/k8s/scripts/render.ts --check                 fails if the committed files differ from a fresh render
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { OVERLAYS, type OverlayName } from '../src/overlay.ts';
import { renderYamlFiles } from '../src/render.ts';
import { withSettings } from '../src/settings-doc.ts';

const repoRoot = path.resolve(import.meta.dirname, '../../..');
const DOC = path.join(repoRoot, 'docs/kubernetes.md');

const { values } = parseArgs({ options: { overlay: { type: 'string' }, out: { type: 'string' }, check: { type: 'boolean', default: false } } });
const names = values.overlay ? [values.overlay] : Object.keys(OVERLAYS);
for (const name of names) {
  if (!(name in OVERLAYS)) {
    console.error(`unknown overlay ${name}: ${Object.keys(OVERLAYS).join(' or ')}`);
    process.exit(2);
  }
}
if (values.out && names.length !== 1) {
  console.error('--out needs one --overlay');
  process.exit(2);
}

const drift: string[] = [];
for (const name of names as OverlayName[]) {
  const dir = path.resolve(values.out ?? path.join(repoRoot, 'infra/k8s/rendered', name));
  const files = renderYamlFiles(OVERLAYS[name]);
  if (values.check) {
    const present = existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith('.yaml')) : [];
    for (const file of new Set([...present, ...files.keys()])) {
      const committed = present.includes(file) ? readFileSync(path.join(dir, file), 'utf8') : undefined;
      if (committed !== files.get(file)) drift.push(path.relative(repoRoot, path.join(dir, file)));
    }
    continue;
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of files) writeFileSync(path.join(dir, file), text);
  console.log(`${name}: ${[...files.keys()].join(', ')} in ${path.relative(repoRoot, dir) || dir}`);
}

if (!values.out) {
  const document = readFileSync(DOC, 'utf8');
  const updated = withSettings(document);
  if (values.check && updated !== document) drift.push('docs/kubernetes.md (settings tables)');
  if (!values.check && updated !== document) writeFileSync(DOC, updated);
}

if (drift.length > 0) {
  console.error(`Out of date (run \`npm run k8s:render\`):\n  ${drift.join('\n  ')}`);
  process.exit(1);
}
if (values.check) console.log('rendered manifests and docs/kubernetes.md are up to date');
