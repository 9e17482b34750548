import type { Reply } from '@sigil/kit/api';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Nothing to load, run, frame or post: the page is text. */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** What the test login's popup shows at the end; the dashboard learns the outcome by polling the test. */
export function testResultPage(succeeded: boolean, reason?: string | null): Reply {
  const title = succeeded ? 'Test login succeeded' : 'Test login failed';
  const body = [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${title}</title></head><body>`,
    `<main><h1>${title}</h1>`,
    succeeded || !reason ? '' : `<p>${escapeHtml(reason)}</p>`,
    '<p>Nobody was signed in. You can close this window.</p></main>',
    '</body></html>',
  ].join('\n');
  return { status: 200, body, headers: PAGE_HEADERS };
}

/** A redirect the browser must not cache (it carries a one-time state). */
export function redirect(status: 302 | 303, location: string, headers: Record<string, string> = {}): Reply {
  return { status, headers: { location, 'cache-control': 'no-store', ...headers } };
}
