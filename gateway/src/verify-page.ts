import type { Router } from 'express';
import { VERIFY_PAGE_CSP, VERIFY_PAGE_DIR } from '@sigil/verify-page';
import { staticPageRouter } from './static-page.ts';

/**
 * The public verification page under `/verify` (apps/verify-page): anyone hashes a sealed PDF in the browser and checks
 * it against the transparency log; certificates link here with `#sha256=<hex>`. Not framable, its own scripts only.
 */
export function verifyPageRouter(): Router {
  return staticPageRouter({
    dir: VERIFY_PAGE_DIR,
    headers: { 'content-security-policy': VERIFY_PAGE_CSP, 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer', 'cache-control': 'no-cache' },
  });
}
