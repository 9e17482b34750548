// Whether a request came over TLS (HSTS, Secure cookies), and whether a browser's write comes from another origin (CSRF).
import { describe, expect, it } from 'vitest';
import { crossOriginRefusal, isSecureRequest } from '../src/http/browser-security.ts';

const request = (headers: Record<string, string>, method = 'POST', encrypted = false) => ({ headers, method, socket: { encrypted } as never });

describe('isSecureRequest', () => {
  it("believes the gateway's own TLS socket, and X-Forwarded-Proto only from a trusted proxy", () => {
    expect(isSecureRequest(request({}, 'GET', true), 0)).toBe(true);
    expect(isSecureRequest(request({ 'x-forwarded-proto': 'https' }), 0)).toBe(false);
    expect(isSecureRequest(request({ 'x-forwarded-proto': 'https' }), 1)).toBe(true);
    expect(isSecureRequest(request({ 'x-forwarded-proto': 'HTTPS, http' }), 2)).toBe(true);
    expect(isSecureRequest(request({ 'x-forwarded-proto': 'http' }), 1)).toBe(false);
    expect(isSecureRequest(request({}), 1)).toBe(false);
  });
});

describe('crossOriginRefusal', () => {
  const host = { host: 'sigil.example.com' };
  it.each([
    ['same-origin fetch', { ...host, 'sec-fetch-site': 'same-origin', origin: 'https://sigil.example.com' }],
    ["a person's own navigation", { ...host, 'sec-fetch-site': 'none' }],
    ['an older browser on the same origin', { ...host, origin: 'https://sigil.example.com' }],
    ['not a browser (neither header)', host],
  ])('lets through %s', (_name, headers) => {
    expect(crossOriginRefusal(request(headers))).toBeUndefined();
  });

  it.each([
    ['another site', { ...host, 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }],
    ['a sibling subdomain', { ...host, 'sec-fetch-site': 'same-site', origin: 'https://app.example.com' }],
    ['another site, Origin withheld', { ...host, 'sec-fetch-site': 'cross-site' }],
    ['cross-site even with a matching Origin', { ...host, 'sec-fetch-site': 'cross-site', origin: 'https://sigil.example.com' }],
    ['an older browser elsewhere', { ...host, origin: 'https://evil.example' }],
    ['another port', { ...host, origin: 'https://sigil.example.com:8443' }],
    ['an opaque origin', { ...host, origin: 'null' }],
  ])('refuses %s', (_name, headers) => {
    expect(crossOriginRefusal(request(headers))).toEqual(expect.any(String));
  });

  it('lets safe methods through, except for a handshake that opens a channel', () => {
    const headers = { ...host, 'sec-fetch-site': 'cross-site' };
    for (const method of ['GET', 'HEAD', 'OPTIONS']) expect(crossOriginRefusal(request(headers, method))).toBeUndefined();
    expect(crossOriginRefusal(request(headers, 'GET'), { always: true })).toEqual(expect.any(String));
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) expect(crossOriginRefusal(request(headers, method))).toEqual(expect.any(String));
  });
});
