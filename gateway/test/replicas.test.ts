import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createUpstream, endToEndHeaders, forward, type Upstream } from '../src/proxy.ts';
import { balancedFetch, createRoundRobin, neverConnected } from '../src/replicas.ts';

/** A service replica that answers with its name and the body it read; `onRequest` may tear the connection down instead. */
async function replica(name: string, onRequest?: (req: IncomingMessage) => boolean): Promise<{ url: string; seen: string[]; server: Server }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body}`);
      if (onRequest?.(req)) return void req.socket.destroy();
      res.setHeader('content-type', 'text/plain');
      res.end(`${name}:${body}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

/** An address where nothing listens: connections are refused. */
async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

const servers: Server[] = [];
const upstreams: Upstream[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) server.close();
  for (const upstream of upstreams.splice(0)) await upstream.close();
});

/** A gateway in front of these replicas: `forward` with the replicas' URLs, 502 when none can be reached. */
async function gatewayTo(urls: string[]): Promise<string> {
  const upstream = createUpstream();
  upstreams.push(upstream);
  const server = createServer((req, res) =>
    forward(req, res, {
      baseUrl: urls,
      headers: endToEndHeaders(req.headers),
      upstream,
      onUnreachable: () => {
        res.statusCode = 502;
        res.end('unreachable');
      },
    }),
  );
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('replicas behind the gateway', () => {
  it('spreads requests round robin over the replicas', async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    servers.push(a.server, b.server);
    const gateway = await gatewayTo([a.url, b.url]);
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await (await fetch(`${gateway}/v1/things?i=${i}`)).text());
    expect(answers).toEqual(['a:', 'b:', 'a:', 'b:', 'a:', 'b:']);
  });

  it('sends a request a replica refused to the next one, its streamed body intact', async () => {
    const b = await replica('b');
    servers.push(b.server);
    const gateway = await gatewayTo([await refusingUrl(), b.url]);
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${gateway}/v1/things`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `payload ${i}` });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(`b:payload ${i}`);
    }
    expect(b.seen).toEqual([0, 1, 2, 3].map((i) => `POST /v1/things payload ${i}`));
  });

  it('never sends a request again once a replica received it, even if that replica dies before answering', async () => {
    const a = await replica('a', () => true);
    const b = await replica('b');
    servers.push(a.server, b.server);
    const gateway = await gatewayTo([a.url, b.url]);
    const res = await fetch(`${gateway}/v1/things`, { method: 'POST', body: 'once' });
    expect(res.status).toBe(502);
    expect(a.seen).toEqual(['POST /v1/things once']);
    expect(b.seen).toEqual([]);
  });

  it('answers 502 when every replica refuses', async () => {
    const gateway = await gatewayTo([await refusingUrl(), await refusingUrl()]);
    expect((await fetch(`${gateway}/v1/things`)).status).toBe(502);
  });

  it('round-robins and skips refusing replicas for the calls the gateway makes itself (key checks, subgraphs)', async () => {
    const b = await replica('b');
    servers.push(b.server);
    const refusing = await refusingUrl();
    const balanced = balancedFetch([refusing, b.url]);
    for (let i = 0; i < 3; i++) expect(await (await balanced(`${refusing}/internal/check`, { method: 'POST', body: `call ${i}` })).text()).toBe(`b:call ${i}`);
    await expect(balancedFetch([refusing, await refusingUrl()])(`${refusing}/x`)).rejects.toSatisfy(neverConnected);
  });

  it('starts each request one replica further', () => {
    const roundRobin = createRoundRobin();
    expect([0, 1, 2, 3].map(() => roundRobin.order(['x', 'y', 'z']))).toEqual([['x', 'y', 'z'], ['y', 'z', 'x'], ['z', 'x', 'y'], ['x', 'y', 'z']]);
    expect(roundRobin.order('only')).toEqual(['only']);
  });
});
