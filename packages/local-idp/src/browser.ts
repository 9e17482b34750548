/**
 * What a browser does with sign-in pages (the provider's, the service provider's), for tests without one: keep cookies per origin, follow no redirect
 * on its own, and read a page's form (its action and its fields).
 */

export interface PageForm {
  action: string;
  fields: Record<string, string>;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescapeHtml = (text: string) => text.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!);

/** The page's first form: its action resolved against the page's URL, and its named inputs with their values. */
export function readForm(html: string, pageUrl: string): PageForm {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (!form) throw new Error(`no form in the page:\n${html}`);
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(input[0]);
    if (name) fields[unescapeHtml(name[1]!)] = unescapeHtml(/value="([^"]*)"/.exec(input[0])?.[1] ?? '');
  }
  return { action: new URL(unescapeHtml(form[1]!), pageUrl).toString(), fields };
}

/** A minimal cookie jar: name=value per host, sent back to the host that set it (no paths or expiry needed here). */
export class CookieJar {
  private readonly jar = new Map<string, Map<string, string>>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const host = new URL(url).host;
    const cookies = [...(this.jar.get(host) ?? new Map<string, string>())].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), ...(cookies ? { cookie: cookies } : {}) } });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const hostCookies = this.jar.get(host) ?? new Map<string, string>();
      this.jar.set(host, hostCookies);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || /max-age=0/i.test(line)) hostCookies.delete(pair.slice(0, at).trim());
      else hostCookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    return response;
  }

  /** Fetches `url` and follows redirects until `stopAt(next)`: the last response, and the URL it answered for (or the one `stopAt` stopped at). */
  async follow(url: string, stopAt: (next: string) => boolean = () => false, init: RequestInit = {}): Promise<{ response: Response; url: string }> {
    let current = url;
    let response = await this.fetch(current, init);
    for (let hops = 0; response.status >= 300 && response.status < 400 && hops < 20; hops++) {
      const next = new URL(response.headers.get('location')!, current).toString();
      if (stopAt(next)) return { response, url: next };
      current = next;
      response = await this.fetch(current);
    }
    return { response, url: current };
  }

  /** Posts fields as a browser posts a form (application/x-www-form-urlencoded). */
  post(url: string, fields: Record<string, string>): Promise<Response> {
    return this.fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  }
}

/** Posts a form as a browser would (application/x-www-form-urlencoded). */
export function postForm(jar: CookieJar, form: PageForm, overrides: Record<string, string> = {}): Promise<Response> {
  return jar.post(form.action, { ...form.fields, ...overrides });
}
