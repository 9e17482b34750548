import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SIGIL, type AuthKind } from '../src/index.ts';

/** The monorepo root (`/work/main` in the workspace layout). */
export const repoRoot = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The spec as the product team keeps it, beside the repository; CI has it there. */
export const sharedSpecPath = path.resolve(repoRoot, '../shared/spec/esign-service.md');
/** The copy kept in the repository, so a clone on its own can run the coverage tests too. */
export const vendoredSpecPath = path.resolve(repoRoot, 'docs/spec/esign-service.md');
export const specPath = existsSync(sharedSpecPath) ? sharedSpecPath : vendoredSpecPath;

export function readSpec(): string {
  if (!existsSync(specPath)) {
    throw new Error(`The e-signature spec is missing: expected it at ${sharedSpecPath} or ${vendoredSpecPath}.`);
  }
  return readFileSync(specPath, 'utf8');
}

export interface SpecOperation {
  method: string;
  path: string;
  auth: AuthKind;
  idempotent: boolean;
  section: string;
  row: string;
}

const AUTH_LETTERS = new Set(['K', 'D', 'S', 'V', 'P']);

/** Spec paths as the document writes them (the keys file carries the product word). */
export function normaliseSpecPath(p: string): string {
  return /^\/\.well-known\/[^/]+\/keys\.json$/.test(p) ? SIGIL.keysPath : p;
}

function cells(line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
}

/**
 * Every operation of the spec's part 4: rows of its markdown tables whose
 * first cell is `METHOD /path`. The auth comes from the row's Auth column,
 * or from the section heading (`(K)`, `(S unless stated)`).
 */
export function parseSpecOperations(markdown: string): { operations: SpecOperation[]; sections: string[] } {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /^## 4\.\s/.test(l));
  if (start === -1) throw new Error('spec: part 4 (## 4. Endpoints) not found');
  const endOffset = lines.slice(start + 1).findIndex((l) => /^## \d+\.\s/.test(l));
  const part = endOffset === -1 ? lines.slice(start) : lines.slice(start, start + 1 + endOffset);

  const operations: SpecOperation[] = [];
  const sections: string[] = [];
  let section = '';
  let sectionAuth: AuthKind | undefined;
  let authColumn = -1;
  for (const line of part) {
    const heading = /^###\s+(.*)$/.exec(line);
    if (heading) {
      section = (heading[1] ?? '').trim();
      sections.push(section);
      const m = /\(([KDSVP])\b[^)]*\)/.exec(section);
      sectionAuth = m ? (m[1] as AuthKind) : undefined;
      authColumn = -1;
      continue;
    }
    if (!line.trim().startsWith('|')) continue;
    const row = cells(line);
    if (row.every((c) => /^:?-+:?$/.test(c))) continue; // separator row
    const first = row[0] ?? '';
    const op = /^`(GET|POST|PUT|PATCH|DELETE) (\S+)`$/.exec(first);
    if (!op) {
      authColumn = row.findIndex((c) => c.toLowerCase() === 'auth'); // a header row
      continue;
    }
    const authCell = authColumn >= 0 ? (row[authColumn] ?? '') : '';
    const letter = authCell.charAt(0);
    const auth = AUTH_LETTERS.has(letter) ? (letter as AuthKind) : sectionAuth;
    if (!auth) throw new Error(`spec: no auth for ${first} in section "${section}"`);
    const rest = row.slice(1).join(' | ');
    operations.push({
      method: op[1] as string,
      path: normaliseSpecPath(op[2] as string),
      auth,
      idempotent: /\bIdem\b/.test(rest),
      section,
      row: line.trim(),
    });
  }
  return { operations, sections };
}
