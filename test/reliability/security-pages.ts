import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CONSOLE_DIST_DIR } from '@strata/console';
import { DASHBOARD_DIST_DIR } from '@sigil/dashboard';
import { HOSTED_PAGES_DIR } from '@sigil/hosted-pages';
import { SIGNING_PAGE_DIR } from '@sigil/signing-page';
import { VERIFY_PAGE_DIR } from '@sigil/verify-page';

/**
 * Every HTML page the gateway serves (our code, not the stand-ins for third parties: the local IdP's and processor's
 * pages are the IdP's and Stripe's in production). A mount is one row; its pages are the row's paths plus every
 * `.html` file of its folder, so a page added to a folder is checked without editing this file.
 */
export interface PageMount {
  mount: string;
  dir: string;
  /** Paths that answer a page without naming its file (index, deep links). */
  paths: string[];
  /** The signing page is the embed: any origin may frame it (docs/signing.md, "Embedding"). Others: never. */
  embeddable: boolean;
}

export const PAGE_MOUNTS: PageMount[] = [
  { mount: '/app', dir: process.env.DASHBOARD_DIST_DIR ?? DASHBOARD_DIST_DIR, paths: ['/app', '/app/', '/app/sign-in', '/app/envelopes/env_probe'], embeddable: false },
  { mount: '/console', dir: process.env.CONSOLE_DIST_DIR ?? CONSOLE_DIST_DIR, paths: ['/console', '/console/targets/default/probe'], embeddable: false },
  { mount: '/sign', dir: SIGNING_PAGE_DIR, paths: ['/sign', '/sign/'], embeddable: true },
  { mount: '/verify', dir: VERIFY_PAGE_DIR, paths: ['/verify', '/verify/'], embeddable: false },
  { mount: '/view', dir: HOSTED_PAGES_DIR, paths: ['/view', '/view/'], embeddable: false },
  { mount: '/l', dir: HOSTED_PAGES_DIR, paths: ['/l/lnk_3F9aK2mQ7xLpR8sT'], embeddable: false },
];

/** Mounts of the gateway that are not pages. */
const NOT_PAGES = new Set(['/graphql']);

/** The path mounts `gateway/src/app.ts` declares (`app.use('/x', ...)`), to catch a page added without a row. */
export function declaredMounts(): string[] {
  const source = readFileSync(path.resolve(import.meta.dirname, '../../gateway/src/app.ts'), 'utf8');
  return [...source.matchAll(/app\.use\(\s*'(\/[^']*)'/g)].map((match) => match[1] as string).filter((mount) => !NOT_PAGES.has(mount));
}

/** Each page path of a mount: its `paths`, then `<mount>/<file>.html` for every HTML file in its folder. */
export function pagePaths(row: PageMount): string[] {
  const files = readdirSync(row.dir).filter((file) => file.endsWith('.html'));
  return [...row.paths, ...files.map((file) => `${row.mount}/${file}`)];
}

/** A Content-Security-Policy as directive → sources. */
export function parseCsp(header: string | null): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  for (const part of (header ?? '').split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name && !directives.has(name.toLowerCase())) directives.set(name.toLowerCase(), sources);
  }
  return directives;
}

const UNSAFE = ["'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", '*', 'data:', 'http:', 'https:'];
const GOOD_REFERRER = new Set(['no-referrer', 'same-origin', 'strict-origin', 'strict-origin-when-cross-origin']);

/**
 * What is wrong with one HTML answer's headers and markup (empty when nothing): CSP with scripts and styles from the
 * page's own origin only (no `'unsafe-inline'`; a nonce or hash is fine), plugins and `<base>` locked, framing as the
 * page's row says (`frame-ancestors 'none'` and `X-Frame-Options: DENY`, or `*` for the embed), `nosniff`, a
 * referrer policy that never sends the path to another site, and no inline code the policy would block (a page that
 * needed `'unsafe-inline'` would be broken under it).
 */
export function pageProblems(headers: Headers, html: string, embeddable: boolean): string[] {
  const problems: string[] = [];
  if (!/^text\/html/.test(headers.get('content-type') ?? '')) problems.push(`content-type ${headers.get('content-type')}`);
  const csp = parseCsp(headers.get('content-security-policy'));
  if (csp.size === 0) problems.push('no Content-Security-Policy');
  for (const directive of ['script-src', 'style-src']) {
    const sources = csp.get(directive) ?? csp.get('default-src');
    if (!sources) problems.push(`no ${directive} (nor default-src)`);
    else for (const source of sources) if (UNSAFE.includes(source.toLowerCase())) problems.push(`${directive} allows ${source}`);
  }
  if (csp.get('object-src')?.join(' ') !== "'none'" && csp.get('default-src')?.join(' ') !== "'none'") problems.push('object-src is not none');
  if (!csp.has('base-uri')) problems.push('no base-uri');
  const ancestors = csp.get('frame-ancestors')?.join(' ');
  if (embeddable) {
    if (ancestors !== '*') problems.push(`frame-ancestors ${ancestors}: the embed must be framable`);
    if (headers.has('x-frame-options')) problems.push('X-Frame-Options on the embed');
  } else {
    if (ancestors !== "'none'") problems.push(`frame-ancestors ${ancestors}`);
    if (headers.get('x-frame-options') !== 'DENY') problems.push(`X-Frame-Options ${headers.get('x-frame-options')}`);
  }
  if (headers.get('x-content-type-options') !== 'nosniff') problems.push(`X-Content-Type-Options ${headers.get('x-content-type-options')}`);
  if (!GOOD_REFERRER.has(headers.get('referrer-policy') ?? '')) problems.push(`Referrer-Policy ${headers.get('referrer-policy')}`);
  problems.push(...inlineCode(html, csp));
  return problems;
}

/** Inline scripts, handlers, `style` attributes and `<style>` elements the page's policy does not let through. */
function inlineCode(html: string, csp: Map<string, string[]>): string[] {
  const problems: string[] = [];
  const styleNonces = new Set((csp.get('style-src') ?? []).flatMap((source) => /^'nonce-(.+)'$/.exec(source)?.[1] ?? []));
  for (const tag of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    if (!/\bsrc=/i.test(tag[1] ?? '') && (tag[2] ?? '').trim() !== '') problems.push('an inline <script>');
  }
  for (const tag of html.matchAll(/<style\b([^>]*)>/gi)) {
    const nonce = /\bnonce="([^"]*)"/i.exec(tag[1] ?? '')?.[1];
    if (!nonce || !styleNonces.has(nonce)) problems.push('a <style> element without the policy nonce');
  }
  if (/<[a-z][^>]*\son[a-z]+\s*=/i.test(html)) problems.push('an inline event handler attribute');
  if (/<[a-z][^>]*\sstyle\s*=/i.test(html)) problems.push('a style attribute');
  return problems;
}

/** One `Set-Cookie` line as name, value and attributes (names lower-cased). */
export function parseSetCookie(line: string): { name: string; value: string; attributes: Map<string, string> } {
  const [pair = '', ...rest] = line.split(';');
  const eq = pair.indexOf('=');
  const attributes = new Map<string, string>();
  for (const part of rest) {
    const at = part.indexOf('=');
    attributes.set((at === -1 ? part : part.slice(0, at)).trim().toLowerCase(), at === -1 ? '' : part.slice(at + 1).trim());
  }
  return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), attributes };
}

/**
 * What is wrong with a cookie our code set: always HttpOnly and SameSite; Lax or Strict, except the SSO binding cookie,
 * which must come back on the IdP's cross-site POST (SAML) and so is `None`, which browsers accept only with Secure;
 * Secure whenever the request came over TLS.
 */
export function cookieProblems(line: string, overTls: boolean): string[] {
  const { name, attributes } = parseSetCookie(line);
  const problems: string[] = [];
  const sameSite = attributes.get('samesite')?.toLowerCase();
  if (!attributes.has('httponly')) problems.push(`${name}: not HttpOnly`);
  if (name === 'sigil_sso') {
    if (sameSite !== 'none' || !attributes.has('secure')) problems.push(`${name}: SameSite ${sameSite} (None with Secure expected)`);
  } else if (sameSite !== 'lax' && sameSite !== 'strict') problems.push(`${name}: SameSite ${sameSite}`);
  if (overTls && !attributes.has('secure')) problems.push(`${name}: not Secure over TLS`);
  if (attributes.get('path') !== '/') problems.push(`${name}: Path ${attributes.get('path')}`);
  return problems;
}
