/**
 * The identity provider's two pages: the sign-in form (e-mail, name, groups; no password: it is a local IdP) and the
 * page that carries a SAML response to the service provider (a form that submits itself). Plain HTML with one small
 * stylesheet and one tiny script, allowed by their hashes in the page's Content-Security-Policy.
 */
import { createHash } from 'node:crypto';
import type { Response } from 'express';
import escapeHtml from 'escape-html';

const STYLESHEET = `
:root { color-scheme: light; --ink: #1a1f36; --muted: #4f566b; --line: #d5dbe5; --field: #6b7385; --accent: #4338ca; --accent-dark: #312e81; --page: #f6f8fb; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: var(--page); }
main { max-width: 440px; margin: 48px auto; padding: 0 16px; overflow-wrap: anywhere; }
.panel { background: #fff; border: 1px solid var(--line); border-radius: 12px; padding: 24px; box-shadow: 0 1px 3px rgba(26, 31, 54, .08); }
.badge { display: inline-block; font-size: 12px; font-weight: 700; text-transform: uppercase; letter-spacing: .04em; color: #7a2e0e; background: #fef0c7; border-radius: 4px; padding: 2px 8px; }
h1 { font-size: 22px; line-height: 1.25; margin: 12px 0 8px; }
p { margin: 0 0 16px; color: var(--muted); }
.field { margin-bottom: 16px; }
.field label { display: block; font-weight: 600; margin-bottom: 6px; }
.field input { width: 100%; height: 44px; padding: 0 12px; font: inherit; color: var(--ink); background: #fff; border: 1px solid var(--field); border-radius: 8px; }
.hint { display: block; font-size: 14px; color: var(--muted); margin-top: 4px; }
button { width: 100%; min-height: 44px; padding: 10px 20px; font: inherit; font-weight: 700; color: #fff; background: var(--accent); border: 0; border-radius: 8px; cursor: pointer; }
button:hover { background: var(--accent-dark); }
button:focus-visible, input:focus-visible { outline: 3px solid #818cf8; outline-offset: 2px; }
`;
const SUBMIT_SCRIPT = 'document.forms[0].submit();';

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const CSP = `default-src 'none'; style-src ${hash(STYLESHEET)}; script-src ${hash(SUBMIT_SCRIPT)}; base-uri 'none'; frame-ancestors 'none'`;

const HEADERS = { 'Content-Security-Policy': CSP, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' };

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLESHEET}</style></head>
<body><main><div class="panel">${body}</div></main></body>
</html>`;
}

function send(res: Response, status: number, title: string, body: string): void {
  res.status(status).set({ 'Content-Type': 'text/html; charset=utf-8', ...HEADERS }).send(page(title, body));
}

export interface SignInPage {
  /** Where the form posts. */
  action: string;
  /** The application asking, shown to the person ("… asks you to sign in"). */
  requester: string;
  protocol: 'SAML' | 'OpenID Connect';
  /** E-mail addresses offered as suggestions (the `users` option). */
  knownEmails: string[];
  /** The e-mail field's value (the application's login hint). */
  email?: string;
  error?: string;
}

/** The sign-in form. Whatever is entered is who the person is: there is no password. */
export function sendSignInPage(res: Response, page: SignInPage, status = 200): void {
  const suggestions = page.knownEmails.length
    ? `<datalist id="known-emails">${page.knownEmails.map((email) => `<option value="${escapeHtml(email)}"></option>`).join('')}</datalist>`
    : '';
  send(
    res,
    status,
    'Sign in · Local identity provider',
    `<span class="badge">Local identity provider</span>
<h1>Sign in</h1>
<p>${escapeHtml(page.requester)} asks you to sign in (${page.protocol}). This provider has no passwords: enter who you want to be.</p>
${page.error ? `<p role="alert" id="email-error"><strong>${escapeHtml(page.error)}</strong></p>` : ''}
<form method="post" action="${escapeHtml(page.action)}">
<div class="field"><label for="email">Email</label><input id="email" name="email" type="email" autocomplete="email" required${page.error ? ' aria-invalid="true" aria-describedby="email-error"' : ''}${page.email ? ` value="${escapeHtml(page.email)}"` : ''}${page.knownEmails.length ? ' list="known-emails"' : ''}></div>
<div class="field"><label for="name">Name</label><input id="name" name="name" type="text" autocomplete="name" aria-describedby="name-hint"><span class="hint" id="name-hint">First and last name; taken from the e-mail address when empty.</span></div>
<div class="field"><label for="groups">Groups</label><input id="groups" name="groups" type="text" aria-describedby="groups-hint"><span class="hint" id="groups-hint">Optional, separated by commas.</span></div>
${suggestions}
<button type="submit">Sign in</button>
</form>`,
  );
}

/** The page that posts a SAML response (and RelayState) to the service provider's assertion consumer service. */
export function sendAutoPostPage(res: Response, target: string, fields: Record<string, string | undefined>): void {
  const inputs = Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  send(
    res,
    200,
    'Signing you in · Local identity provider',
    `<h1>Signing you in …</h1>
<form method="post" action="${escapeHtml(target)}">${inputs}<p>If nothing happens, continue by hand.</p><button type="submit">Continue</button></form>
<script>${SUBMIT_SCRIPT}</script>`,
  );
}

const errorBody = (message: string) => `<span class="badge">Local identity provider</span><h1>This sign-in cannot continue</h1><p role="alert">${escapeHtml(message)}</p>`;

/** A request the provider cannot serve, said plainly. */
export function sendErrorPage(res: Response, status: number, message: string): void {
  send(res, status, 'Error · Local identity provider', errorBody(message));
}

/** The same page for a framework that is not Express (the OpenID provider's Koa). */
export function errorPage(message: string): { html: string; headers: Record<string, string> } {
  return { html: page('Error · Local identity provider', errorBody(message)), headers: HEADERS };
}
