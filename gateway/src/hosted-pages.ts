import type { Router } from 'express';
import { HOSTED_PAGES_DIR, SIGNING_LINK_ID } from '@sigil/hosted-pages';
import { SIGNING_PAGE_CSP } from '@sigil/signing-page';
import { staticPageRouter } from './static-page.ts';

/**
 * The signing page's headers: its own scripts only, same-origin API calls, no referrer (the viewer link's token is in
 * the fragment, which browsers never send), never cached by shared caches. Unlike the signing page they are not an
 * embed: never framed (clickjacking).
 */
const HEADERS = {
  'content-security-policy': SIGNING_PAGE_CSP.split('; ')
    .map((directive) => (directive.startsWith('frame-ancestors ') ? "frame-ancestors 'none'" : directive))
    .join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/** The hosted viewer page under `/view` (apps/hosted-pages): a viewer's live, read-only status of one envelope. */
export function viewerPageRouter(): Router {
  return staticPageRouter({ dir: HOSTED_PAGES_DIR, headers: HEADERS, index: 'view.html' });
}

/** The hosted always-on link page under `/l`: `/l/lnk_...` is the page, the other paths its files. */
export function linkPageRouter(): Router {
  return staticPageRouter({
    dir: HOSTED_PAGES_DIR,
    headers: HEADERS,
    index: 'link.html',
    routes: (router) => {
      router.get('/:id', (req, res, next) => (SIGNING_LINK_ID.test(req.params.id) ? res.sendFile('link.html', { root: HOSTED_PAGES_DIR }) : next()));
    },
  });
}
