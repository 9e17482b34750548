import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ResolvedAddress, UrlPolicy } from '@sigil/kit/http';
import { FETCHERS, POLICY_USERS, type Outcome } from './ssrf-fetchers.ts';
import { installDialGuard, startTrap, type DialGuard } from './ssrf-guard.ts';

/**
 * SSRF (issue 32, point 5): for every URL the platform fetches on someone else's say (ssrf-fetchers.ts, one row per
 * fetcher), private, loopback, link-local, IPv6-mapped and oddly written addresses, names that resolve to any of them,
 * and redirects to them are refused before a connection is opened. Proof that nothing was opened: a dial guard on
 * every TCP connect of this process (which also keeps a buggy fetcher from reaching anything but loopback), and a trap
 * server on loopback, the port the URLs name, that must see no connection. DNS is a stub: no query leaves the machine.
 */
let guard: DialGuard;
let trap: Awaited<ReturnType<typeof startTrap>>;
let hop: http.Server;
let hopPort: number;
let hopRequests = 0;
const resolved: string[] = [];

/** Names the stub resolver knows; anything else does not resolve. */
const DNS: Record<string, ResolvedAddress[]> = {
  'rebind.example.com': [{ address: '127.0.0.1', family: 4 }],
  'metadata.example.com': [{ address: '169.254.169.254', family: 4 }],
  'mixed.example.com': [{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.5', family: 4 }],
  'v6loop.example.com': [{ address: '::1', family: 6 }],
  'mapped.example.com': [{ address: '::ffff:10.0.0.1', family: 6 }],
  'ula.example.com': [{ address: 'fd00::1', family: 6 }],
};

const policy = (): UrlPolicy => ({
  allowedOrigins: [`http://127.0.0.1:${hopPort}`],
  resolve: async (host) => {
    resolved.push(host);
    const answer = DNS[host.toLowerCase()];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return answer;
  },
});

/** The URLs no fetcher may connect to: `{trap}` is the trap's port on loopback. */
const REFUSED: Array<[kind: string, url: string]> = [
  ['loopback', 'https://127.0.0.1:{trap}/'],
  ['loopback, short form', 'https://127.1:{trap}/'],
  ['loopback IPv6', 'https://[::1]:{trap}/'],
  ['unspecified', 'https://0.0.0.0:{trap}/'],
  ['private 10/8', 'https://10.0.0.1/'],
  ['private 172.16/12', 'https://172.16.0.1/'],
  ['private 192.168/16', 'https://192.168.0.1/'],
  ['shared 100.64/10', 'https://100.64.0.1/'],
  ['link-local: cloud metadata', 'https://169.254.169.254/latest/meta-data/'],
  ['link-local IPv6', 'https://[fe80::1]/'],
  ['unique local IPv6', 'https://[fd00::1]/'],
  ['IPv6-mapped loopback', 'https://[::ffff:127.0.0.1]:{trap}/'],
  ['IPv6-mapped metadata', 'https://[::ffff:169.254.169.254]/'],
  ['IPv6-mapped, hex', 'https://[::ffff:a9fe:a9fe]/'],
  ['IPv4-compatible IPv6', 'https://[::7f00:1]:{trap}/'],
  ['NAT64 of metadata', 'https://[64:ff9b::a9fe:a9fe]/'],
  ['6to4 of loopback', 'https://[2002:7f00:1::]:{trap}/'],
  ['decimal', 'https://2130706433:{trap}/'],
  ['decimal metadata', 'https://2852039166/'],
  ['octal', 'https://0177.0.0.1:{trap}/'],
  ['octal, one number', 'https://017700000001:{trap}/'],
  ['hex', 'https://0x7f.0x0.0x0.0x1:{trap}/'],
  ['hex, one number', 'https://0x7f000001:{trap}/'],
  ['localhost', 'https://localhost:{trap}/'],
  ['localhost with a dot', 'https://localhost.:{trap}/'],
  ['*.localhost', 'https://api.localhost:{trap}/'],
  ['*.internal', 'https://metadata.google.internal/'],
  ['*.local', 'https://printer.local/'],
  ['single label', 'https://intranet/'],
  ['name → loopback', 'https://rebind.example.com:{trap}/'],
  ['name → metadata', 'https://metadata.example.com/'],
  ['name → public and private', 'https://mixed.example.com/'],
  ['name → IPv6 loopback', 'https://v6loop.example.com:{trap}/'],
  ['name → mapped private', 'https://mapped.example.com/'],
  ['name → unique local', 'https://ula.example.com/'],
  ['name that does not resolve', 'https://nowhere.example.com/'],
  ['plain http, public address', 'http://93.184.215.14/'],
  ['plain http to loopback', 'http://127.0.0.1:{trap}/'],
  ['credentials in the URL', 'https://user:secret@rebind.example.com:{trap}/'],
  ['file', 'file:///etc/passwd'],
  ['gopher', 'gopher://127.0.0.1:{trap}/_'],
  ['not a URL', 'https://'],
];

/** Where the allowed first hop redirects to; none may be dialled. */
const REDIRECTS: Array<[kind: string, url: string]> = [
  ['loopback', 'https://127.0.0.1:{trap}/'],
  ['plain http loopback (other port)', 'http://127.0.0.1:{trap}/'],
  ['cloud metadata', 'https://169.254.169.254/latest/meta-data/'],
  ['IPv6-mapped loopback', 'https://[::ffff:127.0.0.1]:{trap}/'],
  ['decimal loopback', 'https://2130706433:{trap}/'],
  ['name → loopback', 'https://rebind.example.com:{trap}/'],
];

const CLASSIFIED = /private|reserved|public|https|credentials|resolve|not a URL|Invalid URL|redirect/i;
const at = (url: string) => url.replaceAll('{trap}', String(trap.port));

beforeAll(async () => {
  trap = await startTrap();
  hop = http.createServer((req, res) => {
    hopRequests++;
    // `/to/<target>/...`: in the path, since OIDC discovery appends its own path to the issuer and drops a query.
    const encoded = /^\/to\/([^/?]+)/.exec(req.url ?? '/')?.[1];
    const target = encoded && decodeURIComponent(encoded);
    res.writeHead(target ? 302 : 200, target ? { location: target } : { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve) => hop.listen(0, '127.0.0.1', resolve));
  hopPort = (hop.address() as AddressInfo).port;
  guard = installDialGuard();
});
afterAll(async () => {
  guard?.restore();
  hop?.closeAllConnections();
  await new Promise<void>((resolve) => hop?.close(() => resolve()));
  await trap?.close();
});
beforeEach(() => guard.clear());

describe('the table', () => {
  it('has a row for every service file that fetches through the URL policy', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const users = ['services', 'gateway/src'].flatMap((dir) =>
      readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
        .map((file) => path.join(dir, file))
        .filter((file) => file.endsWith('.ts') && /\/src\//.test(file) && !/node_modules|\/generated\/|\/gen\//.test(file))
        .filter((file) => /\b(checkUrl|createPublicFetch|fetchPublicUrl|pinnedAgent)\(/.test(readFileSync(path.join(root, file), 'utf8'))),
    );
    expect(users.sort()).toEqual(Object.keys(POLICY_USERS).sort());
    const rows = new Set(FETCHERS.map((fetcher) => fetcher.name));
    for (const names of Object.values(POLICY_USERS)) for (const name of names) expect(rows, name).toContain(name);
  });
});

describe('the proof itself', () => {
  it('the guard sees a dial and the trap counts it; a fetcher reaches the allowed loopback hop', async () => {
    const socket = net.connect(trap.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('close', resolve).once('error', resolve));
    expect(guard.dials).toEqual([{ host: '127.0.0.1', port: trap.port }]);
    await expect.poll(() => trap.connections()).toBe(1);
    for (const fetcher of FETCHERS.filter((f) => f.name !== 'OIDC issuer discovery' && f.name !== 'SAML metadata URL')) {
      expect(await fetcher.fetch(`http://127.0.0.1:${hopPort}/ok`, policy()), fetcher.name).not.toHaveProperty('refused');
    }
    expect(guard.dials.filter((d) => d.port === hopPort).length).toBeGreaterThan(0);
  });
});

describe.each(FETCHERS)('$name ($usedBy)', (fetcher) => {
  it('refuses every private, loopback, link-local, mapped, oddly written or private-resolving URL without dialling', async () => {
    const before = trap.connections();
    const problems: string[] = [];
    for (const [kind, raw] of REFUSED) {
      guard.clear();
      const outcome: Outcome = await fetcher.fetch(at(raw), policy());
      if (!('refused' in outcome)) problems.push(`${kind} (${raw}): answered ${outcome.answered}`);
      else if (!CLASSIFIED.test(outcome.refused)) problems.push(`${kind} (${raw}): refused for another reason: ${outcome.refused}`);
      if (guard.dials.length) problems.push(`${kind} (${raw}): dialled ${JSON.stringify(guard.dials)}`);
    }
    expect(problems).toEqual([]);
    expect(trap.connections()).toBe(before);
  });

  it('a redirect to any of them is never followed there', async () => {
    const before = trap.connections();
    const problems: string[] = [];
    for (const [kind, raw] of REDIRECTS) {
      guard.clear();
      const served = hopRequests;
      const first = `http://127.0.0.1:${hopPort}/to/${encodeURIComponent(at(raw))}`;
      const outcome = await fetcher.fetch(first, policy());
      const elsewhere = guard.dials.filter((dial) => dial.port !== hopPort);
      if (elsewhere.length) problems.push(`${kind}: dialled ${JSON.stringify(elsewhere)}`);
      if (fetcher.name === 'checkUrl') continue;
      if (hopRequests === served) problems.push(`${kind}: the first hop was never asked`);
      if (fetcher.onRedirect === 'refused') {
        if (!('refused' in outcome) || !/redirected to/.test(outcome.refused)) problems.push(`${kind}: ${JSON.stringify(outcome)}`);
      } else if ('answered' in outcome ? outcome.answered !== '302' : !/status/.test(outcome.refused)) problems.push(`${kind}: ${JSON.stringify(outcome)} (the 3xx is the answer)`);
    }
    expect(problems).toEqual([]);
    expect(trap.connections()).toBe(before);
  });
});
