/**
 * The frame of the hosted pages: plain HTML with one small inline stylesheet (allowed by its hash in the page's
 * Content-Security-Policy, so nothing else can run or load), readable from a phone's width up.
 */
import { createHash } from 'node:crypto';
import escapeHtml from 'escape-html';

const STYLESHEET = `
:root { color-scheme: light; --ink: #1a1f36; --muted: #4f566b; --line: #d5dbe5; --field: #6b7385; --accent: #4338ca; --accent-dark: #312e81; --error: #b42318; --page: #f6f8fb; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: var(--page); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible { outline: 3px solid #818cf8; outline-offset: 2px; }
.bar { display: flex; align-items: center; gap: 12px; padding: 16px 24px; background: #fff; border-bottom: 1px solid var(--line); }
.merchant { font-weight: 700; font-size: 18px; }
.badge { font-size: 12px; font-weight: 700; text-transform: uppercase; letter-spacing: .04em; color: #7a2e0e; background: #fef0c7; border-radius: 4px; padding: 2px 8px; }
.back { margin-left: auto; }
main { max-width: 980px; margin: 0 auto; padding: 32px 24px 48px; }
.columns { display: grid; gap: 32px; }
.columns > * { min-width: 0; }
@media (min-width: 760px) { .columns { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 56px; } }
h1 { font-size: 24px; line-height: 1.25; margin: 0 0 8px; }
h2 { font-size: 18px; margin: 0 0 12px; }
.price { font-size: 36px; line-height: 1.2; font-weight: 700; margin: 8px 0 4px; }
.price small { font-size: 16px; font-weight: 400; color: var(--muted); }
.muted { color: var(--muted); }
.lines { list-style: none; margin: 24px 0 0; padding: 0; border-top: 1px solid var(--line); }
.lines li { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; padding: 12px 0; border-bottom: 1px solid var(--line); }
.lines .amount { text-align: right; }
@media (max-width: 519px) { .lines li { grid-template-columns: minmax(0, 1fr); gap: 2px; } .lines .amount { text-align: left; color: var(--muted); } }
.narrow { max-width: 720px; margin: 0 auto; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 12px; padding: 24px; box-shadow: 0 1px 3px rgba(26, 31, 54, .08); }
.panel + .panel { margin-top: 24px; }
.panel > :last-child { margin-bottom: 0; }
form { margin: 0; }
.field { margin-bottom: 16px; }
.field label { display: block; font-weight: 600; margin-bottom: 6px; }
.field input { width: 100%; height: 46px; padding: 0 12px; font: inherit; color: var(--ink); background: #fff; border: 1px solid var(--field); border-radius: 8px; }
.field input::placeholder { color: var(--field); opacity: 1; }
.field input[aria-invalid="true"] { border: 2px solid var(--error); }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.error { color: var(--error); font-weight: 600; margin: 6px 0 0; }
.hint { font-size: 14px; color: var(--muted); margin: 0 0 16px; }
button, .button { display: inline-block; min-height: 46px; padding: 11px 20px; font: inherit; font-weight: 700; text-align: center; text-decoration: none; border-radius: 8px; cursor: pointer; }
.primary { width: 100%; color: #fff; background: var(--accent); border: 0; }
.primary:hover { background: var(--accent-dark); }
.secondary { color: var(--accent); background: #fff; border: 1px solid var(--accent); }
.danger { color: var(--error); background: #fff; border: 1px solid var(--error); }
.actions { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 16px; }
.notice { background: #ecfdf3; color: #05603a; border: 1px solid #abefc6; border-radius: 8px; padding: 12px 16px; margin: 0 0 24px; font-weight: 600; }
.card-line { font-size: 18px; font-weight: 600; margin: 0; }
`;

const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLESHEET).digest('base64')}'`;

export interface Page {
  title: string;
  body: string;
  /** Origins besides this one that a form of the page may end at (a checkout's redirect to its success URL). */
  formTargets?: string[];
  /** A link back to the merchant in the bar. */
  back?: { href: string; label: string };
}

/** `html` escapes what goes between tags or in attribute values. */
export const html = (text: string | number): string => escapeHtml(String(text));

export function renderPage(page: Page): string {
  const back = page.back ? `<a class="back" href="${html(page.back.href)}">${html(page.back.label)}</a>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${html(page.title)} · Local processor</title>
<style>${STYLESHEET}</style>
</head>
<body>
<header class="bar"><span class="merchant">Sigil</span><span class="badge">Test mode</span>${back}</header>
<main>
${page.body}
</main>
</body>
</html>
`;
}

/** The page's policy: its own stylesheet, no scripts, forms that post here (and end where `formTargets` say). */
export function contentSecurityPolicy(page: Page): string {
  const targets = ["'self'", ...(page.formTargets ?? [])].join(' ');
  return `default-src 'none'; style-src ${STYLE_HASH}; img-src 'self' data:; form-action ${targets}; base-uri 'none'; frame-ancestors 'none'`;
}

/** An origin for `form-action`, or nothing for an address that has none. */
export function originOf(url: string | null): string[] {
  if (!url || !URL.canParse(url)) return [];
  const origin = new URL(url).origin;
  return origin === 'null' ? [] : [origin];
}
