import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sharedSpecPath, vendoredSpecPath } from './helpers.ts';

describe('the spec copy in docs/spec', () => {
  it('is current with ../shared/spec when that folder is beside the checkout, and whole otherwise', () => {
    const copy = readFileSync(vendoredSpecPath, 'utf8');
    if (existsSync(sharedSpecPath)) expect(copy).toBe(readFileSync(sharedSpecPath, 'utf8'));
    else expect(copy).toContain('## 4. Endpoints');
  });
});
