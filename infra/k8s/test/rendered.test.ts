/**
 * The committed YAML under infra/k8s/rendered/ (what operators read and apply without Node) and the settings tables of
 * docs/kubernetes.md are what the TypeScript renders today: `npm run k8s:render` after a change, or this fails.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OVERLAYS, type OverlayName } from '../src/overlay.ts';
import { renderYamlFiles } from '../src/render.ts';
import { withSettings } from '../src/settings-doc.ts';
import { parseAllDocuments } from 'yaml';

const repoRoot = path.resolve(import.meta.dirname, '../../..');

describe.each(Object.keys(OVERLAYS) as OverlayName[])('rendered/%s', (name) => {
  const dir = path.join(repoRoot, 'infra/k8s/rendered', name);
  const fresh = renderYamlFiles(OVERLAYS[name]);

  it('holds exactly the files a render writes, each as rendered', () => {
    expect(existsSync(dir)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual([...fresh.keys()].sort());
    for (const [file, text] of fresh) expect(readFileSync(path.join(dir, file), 'utf8'), `${name}/${file} is stale: npm run k8s:render`).toBe(text);
  });

  it('is YAML that parses into one object per document', () => {
    for (const text of fresh.values()) {
      const documents = parseAllDocuments(text);
      expect(documents.every((document) => document.errors.length === 0)).toBe(true);
      expect(documents.every((document) => typeof (document.toJS() as { kind?: string }).kind === 'string')).toBe(true);
    }
  });
});

it('docs/kubernetes.md carries the settings tables as rendered', () => {
  const document = readFileSync(path.join(repoRoot, 'docs/kubernetes.md'), 'utf8');
  expect(withSettings(document) === document, 'docs/kubernetes.md settings are stale: npm run k8s:render').toBe(true);
});
