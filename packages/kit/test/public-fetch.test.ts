// The SSRF-safe fetch (an IdP's metadata URL, OIDC discovery and token calls): every refusal happens before anything
// is dialled. Every outgoing connection of this file goes through a spy that dials 127.0.0.1 only, and records the
// rest (with the address a pinned lookup answers) instead of dialling it.
import net from 'node:net';
import tls from 'node:tls';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPublicFetch, fetchPublicUrl } from '../src/http/public-fetch.ts';
import { UrlRefused, type Resolver, type UrlPolicy } from '../src/http/url-policy.ts';

interface Dial {
  host: string;
  port: number;
  /** What the connection's own lookup answers for the host (a pinned connection), if it has one. */
  address?: string;
}
const dials: Dial[] = [];

function spyOnConnect(module: typeof net | typeof tls) {
  const original = module.connect.bind(module) as (...args: unknown[]) => net.Socket;
  vi.spyOn(module, 'connect').mockImplementation(((...args: unknown[]) => {
    const options = (typeof args[0] === 'object' ? args[0] : { port: args[0], host: args[1] }) as net.TcpNetConnectOpts;
    const dial: Dial = { host: String(options.host), port: Number(options.port) };
    options.lookup?.(dial.host, {}, (_error, address) => {
      dial.address = Array.isArray(address) ? address[0]!.address : address;
    });
    dials.push(dial);
    if (options.lookup || dial.host !== '127.0.0.1') throw new Error(`test: ${dial.host}:${dial.port} is not dialled`);
    return original(...args);
  }) as never);
}

// A stub DNS: no query leaves the machine; `asked` shows which names reached it.
const dns: Record<string, string[]> = {
  'idp.example.com': ['93.184.216.34'],
  'private.example.com': ['10.0.0.7'],
  'loopback.example.com': ['127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'mapped.example.com': ['::ffff:10.0.0.1'],
  'ula.example.com': ['fd00::1'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.1'],
  'mixed6.example.com': ['2606:2800:220:1:248:1893:25c8:1946', 'fe80::1'],
};
const asked: string[] = [];
const resolve: Resolver = async (host) => {
  asked.push(host);
  const addresses = dns[host];
  if (!addresses) throw new Error('ENOTFOUND');
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

// The allowed origin: a server on 127.0.0.1, counting connections and requests.
let port = 0;
let origin = '';
let connections = 0;
const requests: string[] = [];
const streamed = { bytes: 0, closedEarly: false };
let stalledClosed = 0;
const routes: Record<string, (req: IncomingMessage, res: ServerResponse, body: string) => void> = {
  '/metadata': (_req, res) => res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end('<EntityDescriptor entityID="x"/>'),
  '/missing': (_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('no'),
  '/echo': (req, res, body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, contentType: req.headers['content-type'] ?? null, authorization: req.headers.authorization ?? null, body })),
  '/declared-too-big': (_req, res) => res.writeHead(200, { 'content-length': '4096' }).end('x'.repeat(4096)),
  '/endless': (_req, res) => {
    // Writes 1 KB chunks for as long as the reader reads (at most 64 MB): the client must stop it, not buffer it.
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.on('close', () => (streamed.closedEarly = !res.writableFinished));
    const write = () => {
      while (streamed.bytes < 64 * 1024 * 1024 && !res.destroyed) {
        streamed.bytes += 1024;
        if (!res.write(Buffer.alloc(1024, 120))) return void res.once('drain', write);
      }
      res.end();
    };
    write();
  },
  '/silent': () => undefined,
  '/stalls': (_req, res) => {
    res.on('close', () => stalledClosed++);
    res.writeHead(200, { 'content-type': 'text/plain' }).write('the first part');
  },
  '/to-private': (_req, res) => res.writeHead(302, { location: 'https://10.0.0.5/x' }).end(),
  '/to-metadata-http': (_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end(),
  '/to-metadata-https': (_req, res) => res.writeHead(301, { location: 'https://169.254.169.254/latest/meta-data' }).end(),
  '/to-private-name': (_req, res) => res.writeHead(307, { location: 'https://private.example.com/x' }).end(),
  '/to-mapped': (_req, res) => res.writeHead(302, { location: `http://[::ffff:127.0.0.1]:${port}/metadata` }).end(),
  '/to-credentials': (_req, res) => res.writeHead(302, { location: 'https://user:secret@idp.example.com/x' }).end(),
  '/to-public': (_req, res) => res.writeHead(302, { location: 'https://idp.example.com/metadata' }).end(),
  '/to-echo': (_req, res) => res.writeHead(303, { location: '/echo' }).end(),
  '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
};
const server = createServer((req, res) => {
  const url = new URL(req.url!, origin);
  requests.push(url.pathname);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const hops = /^\/hops\/(\d+)$/.exec(url.pathname);
    if (hops) return void (Number(hops[1]) === 0 ? routes['/metadata']!(req, res, '') : res.writeHead(302, { location: `/hops/${Number(hops[1]) - 1}` }).end());
    (routes[url.pathname] ?? routes['/missing']!)(req, res, Buffer.concat(chunks).toString('utf8'));
  });
});
server.on('connection', () => connections++);

const policy = (): UrlPolicy => ({ allowedOrigins: [origin], resolve });
const limits = () => ({ policy: policy(), maxBytes: 1024, timeoutMs: 2_000 });

async function until(check: () => boolean, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return check();
}

beforeAll(async () => {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  spyOnConnect(net);
  spyOnConnect(tls);
});
afterEach(() => {
  dials.length = 0;
  asked.length = 0;
  requests.length = 0;
});
afterAll(async () => {
  vi.restoreAllMocks();
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

describe('refused before any connection is opened', () => {
  it.each([
    ['private 10/8', 'https://10.0.0.5/metadata', /private or reserved address \(10\.0\.0\.5\)/],
    ['private 172.16/12', 'https://172.16.0.1/metadata', /private or reserved address \(172\.16\.0\.1\)/],
    ['private 172.16/12 (top)', 'https://172.31.255.254/metadata', /private or reserved address \(172\.31\.255\.254\)/],
    ['private 192.168/16', 'https://192.168.1.20/metadata', /private or reserved address \(192\.168\.1\.20\)/],
    ['loopback 127/8', 'https://127.0.0.1/metadata', /private or reserved address \(127\.0\.0\.1\)/],
    ['loopback 127/8 (not .1)', 'https://127.254.0.9/metadata', /private or reserved address \(127\.254\.0\.9\)/],
    ['loopback ::1', 'https://[::1]/metadata', /private or reserved address \(::1\)/],
    ['link-local metadata', 'https://169.254.169.254/latest/meta-data', /private or reserved address \(169\.254\.169\.254\)/],
    ['link-local fe80::', 'https://[fe80::1]/metadata', /private or reserved address \(fe80::1\)/],
    ['unique local fd00::', 'https://[fd00::1]/metadata', /private or reserved address \(fd00::1\)/],
    ['IPv4-mapped dotted', 'https://[::ffff:127.0.0.1]/metadata', /private or reserved address \(::ffff:7f00:1\)/],
    ['IPv4-mapped hex', 'https://[::ffff:7f00:1]/metadata', /private or reserved address \(::ffff:7f00:1\)/],
    ['IPv4-mapped metadata', 'https://[::ffff:169.254.169.254]/metadata', /private or reserved address \(::ffff:a9fe:a9fe\)/],
    ['IPv4-compatible (deprecated)', 'https://[::127.0.0.1]/metadata', /private or reserved address \(::7f00:1\)/],
    ['NAT64 of the metadata address', 'https://[64:ff9b::a9fe:a9fe]/metadata', /private or reserved address \(64:ff9b::a9fe:a9fe\)/],
    ['6to4 of loopback', 'https://[2002:7f00:1::]/metadata', /private or reserved address \(2002:7f00:1::\)/],
    ['decimal', 'https://2130706433/metadata', /private or reserved address \(127\.0\.0\.1\)/],
    ['decimal (private)', 'https://167772165/metadata', /private or reserved address \(10\.0\.0\.5\)/],
    ['octal', 'https://0177.0.0.1/metadata', /private or reserved address \(127\.0\.0\.1\)/],
    ['octal, one number', 'https://017700000001/metadata', /private or reserved address \(127\.0\.0\.1\)/],
    ['hex', 'https://0x7f.0x0.0x0.0x1/metadata', /private or reserved address \(127\.0\.0\.1\)/],
    ['hex, one number', 'https://0xa9fea9fe/metadata', /private or reserved address \(169\.254\.169\.254\)/],
    ['short form', 'https://127.1/metadata', /private or reserved address \(127\.0\.0\.1\)/],
    ['short form (private)', 'https://10.1/metadata', /private or reserved address \(10\.0\.0\.1\)/],
    ['unspecified', 'https://0/metadata', /private or reserved address \(0\.0\.0\.0\)/],
    ['shared address space', 'https://100.64.0.1/metadata', /private or reserved address \(100\.64\.0\.1\)/],
    ['trailing dot', 'https://10.0.0.5./metadata', /private or reserved address \(10\.0\.0\.5\)/],
    ['localhost', 'https://localhost/metadata', /must name a public host/],
    ['localhost.', 'https://localhost./metadata', /must name a public host/],
    ['*.localhost', 'https://idp.localhost/metadata', /must name a public host/],
    ['single label', 'https://intranet/metadata', /must name a public host/],
    ['single label.', 'https://intranet./metadata', /must name a public host/],
    ['plain http', 'http://idp.example.com/metadata', /must be a public https:\/\/ URL/],
    ['another scheme', 'ftp://idp.example.com/metadata', /must be a public https:\/\/ URL/],
    ['loopback on a port not allowed', 'http://127.0.0.1:1/metadata', /must be a public https:\/\/ URL/],
    ['credentials', 'https://user:secret@idp.example.com/metadata', /must not carry credentials/],
    ['not a URL', 'idp.example.com/metadata', /is not a URL/],
    ['DNS answering a private address', 'https://private.example.com/metadata', /host private\.example\.com resolves to a private or reserved address \(10\.0\.0\.7\)/],
    ['DNS answering the metadata address', 'https://metadata.example.com/metadata', /resolves to a private or reserved address \(169\.254\.169\.254\)/],
    ['DNS answering a mapped private address', 'https://mapped.example.com/metadata', /resolves to a private or reserved address \(::ffff:10\.0\.0\.1\)/],
    ['DNS answering a unique local address', 'https://ula.example.com/metadata', /resolves to a private or reserved address \(fd00::1\)/],
    ['DNS answering one public and one private address', 'https://mixed.example.com/metadata', /resolves to a private or reserved address \(10\.0\.0\.1\)/],
    ['DNS answering one public and one link-local IPv6 address', 'https://mixed6.example.com/metadata', /resolves to a private or reserved address \(fe80::1\)/],
    ['DNS answering nothing', 'https://nowhere.example.com/metadata', /host nowhere\.example\.com does not resolve/],
  ])('%s: %s', async (_case, url, reason) => {
    const refusal = createPublicFetch(limits())(url).catch((e: unknown) => e);
    const error = (await refusal) as Error;
    expect(error).toBeInstanceOf(UrlRefused);
    expect(error.message).toMatch(reason);
    await expect(fetchPublicUrl(url, limits())).rejects.toThrow(reason);
    expect(dials).toEqual([]);
  });

  it('a name resolving to loopback, on the port of a listening server: that server is never reached', async () => {
    const before = connections;
    await expect(fetchPublicUrl(`https://loopback.example.com:${port}/metadata`, limits())).rejects.toThrow(/resolves to a private or reserved address \(127\.0\.0\.1\)/);
    expect(asked).toEqual(['loopback.example.com']);
    expect(dials).toEqual([]);
    expect(connections).toBe(before);
  });

  it.each([
    ['https://10.0.0.5/x', '/to-private', /redirected to https:\/\/10\.0\.0\.5\/x: points to a private or reserved address \(10\.0\.0\.5\)/],
    ['http://169.254.169.254/', '/to-metadata-http', /redirected to http:\/\/169\.254\.169\.254\/latest\/meta-data: must be a public https:\/\/ URL/],
    ['https://169.254.169.254/', '/to-metadata-https', /redirected to https:\/\/169\.254\.169\.254\/latest\/meta-data: points to a private or reserved address \(169\.254\.169\.254\)/],
    ['a name resolving privately', '/to-private-name', /redirected to https:\/\/private\.example\.com\/x: host private\.example\.com resolves to a private or reserved address \(10\.0\.0\.7\)/],
    ['an IPv4-mapped loopback', '/to-mapped', /redirected to http:\/\/\[::ffff:7f00:1\]:\d+\/metadata: must be a public https:\/\/ URL/],
    ['a URL with credentials', '/to-credentials', /^redirected to https:\/\/idp\.example\.com\/x: must not carry credentials$/],
  ])('a redirect from the allowed origin to %s: the second hop is never dialled', async (_case, path, reason) => {
    await expect(fetchPublicUrl(`${origin}${path}`, limits())).rejects.toThrow(reason);
    expect(requests).toEqual([path]);
    expect(dials).toEqual([{ host: '127.0.0.1', port }]);
  });
});

describe('what it fetches', () => {
  it('answers the body of an allowed origin', async () => {
    expect(await fetchPublicUrl(`${origin}/metadata`, limits())).toEqual({ url: `${origin}/metadata`, status: 200, contentType: 'application/samlmetadata+xml', body: Buffer.from('<EntityDescriptor entityID="x"/>') });
    expect(dials).toEqual([{ host: '127.0.0.1', port }]);
  });

  it('connects to the address the policy checked, not to what the name would resolve to later', async () => {
    const error = (await createPublicFetch(limits())('https://idp.example.com/metadata').catch((e: unknown) => e)) as Error;
    // The spy refuses to leave the machine; what matters is where the connection was going.
    expect(error).toBeInstanceOf(UrlRefused);
    expect(error.message).toMatch(/could not be fetched/);
    expect(dials).toEqual([{ host: 'idp.example.com', port: 443, address: '93.184.216.34' }]);
    expect(asked).toEqual(['idp.example.com']);
  });

  it('checks and resolves each redirect hop before dialling it', async () => {
    await expect(fetchPublicUrl(`${origin}/to-public`, limits())).rejects.toThrow(/could not be fetched/);
    expect(dials).toEqual([{ host: '127.0.0.1', port }, { host: 'idp.example.com', port: 443, address: '93.184.216.34' }]);
  });

  it('follows relative redirects up to maxRedirects and refuses one more', async () => {
    const response = await createPublicFetch({ ...limits(), maxRedirects: 3 })(`${origin}/hops/3`);
    expect([response.status, response.url, response.redirected, await response.text()]).toEqual([200, `${origin}/hops/0`, true, '<EntityDescriptor entityID="x"/>']);
    requests.length = 0;
    await expect(fetchPublicUrl(`${origin}/loop`, { ...limits(), maxRedirects: 3 })).rejects.toThrow(/redirected more than 3 times/);
    expect(requests).toEqual(['/loop', '/loop', '/loop', '/loop']);
  });

  it('answers a non-2xx as a Response, and fetchPublicUrl refuses it', async () => {
    const response = await createPublicFetch(limits())(`${origin}/missing`);
    expect([response.status, response.ok, await response.text()]).toEqual([404, false, 'no']);
    await expect(fetchPublicUrl(`${origin}/missing`, limits())).rejects.toThrow(new UrlRefused('answered 404'));
  });

  it('sends bodies as fetch would (openid-client posts URLSearchParams), a 303 as a GET, and leaves a manual redirect alone', async () => {
    const fetch = createPublicFetch(limits());
    const posted = await fetch(`${origin}/echo`, { method: 'POST', body: new URLSearchParams({ grant_type: 'authorization_code', code: 'c' }), headers: { authorization: 'Basic eA==' } });
    expect(await posted.json()).toEqual({ method: 'POST', contentType: 'application/x-www-form-urlencoded;charset=UTF-8', authorization: 'Basic eA==', body: 'grant_type=authorization_code&code=c' });
    const seeOther = await fetch(`${origin}/to-echo`, { method: 'POST', body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(await seeOther.json()).toMatchObject({ method: 'GET', contentType: null, body: '' });
    const manual = await fetch(`${origin}/to-private`, { redirect: 'manual' });
    expect([manual.status, manual.headers.get('location')]).toEqual([302, 'https://10.0.0.5/x']);
    await manual.body?.cancel();
    expect(requests).toEqual(['/echo', '/to-echo', '/echo', '/to-private']);
  });

  it('refuses a body whose Content-Length is over the limit before reading it', async () => {
    await expect(createPublicFetch(limits())(`${origin}/declared-too-big`)).rejects.toThrow(/answered more than 1024 bytes \(4096\)/);
  });

  it('refuses a streamed body over the limit while it streams, without reading the rest', async () => {
    streamed.bytes = 0;
    streamed.closedEarly = false;
    await expect(fetchPublicUrl(`${origin}/endless`, limits())).rejects.toThrow(new UrlRefused('answered more than 1024 bytes'));
    expect(await until(() => streamed.closedEarly)).toBe(true);
    expect(streamed.bytes).toBeLessThan(16 * 1024 * 1024);
    const response = await createPublicFetch(limits())(`${origin}/endless`);
    await expect(response.text()).rejects.toThrow(/answered more than 1024 bytes/);
  });

  it('gives up on a server that does not answer, or stops half-way, at the timeout', async () => {
    const started = Date.now();
    await expect(fetchPublicUrl(`${origin}/silent`, { ...limits(), timeoutMs: 300 })).rejects.toThrow(new UrlRefused('did not answer within 300 ms'));
    expect(Date.now() - started).toBeLessThan(5_000);
    const response = await createPublicFetch({ ...limits(), timeoutMs: 300 })(`${origin}/stalls`);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow(new UrlRefused('did not answer within 300 ms'));
    // A body nobody reads does not keep its connection past the deadline either.
    const closedBefore = stalledClosed;
    const unread = await createPublicFetch({ ...limits(), timeoutMs: 300 })(`${origin}/stalls`);
    expect(unread.status).toBe(200);
    expect(await until(() => stalledClosed > closedBefore)).toBe(true);
  });

  it('lets the caller abort with its own signal', async () => {
    const caller = new AbortController();
    const pending = createPublicFetch(limits())(`${origin}/silent`, { signal: caller.signal });
    expect(await until(() => requests.includes('/silent'))).toBe(true);
    caller.abort(new Error('the caller gave up'));
    await expect(pending).rejects.toThrow('the caller gave up');
  });
});
