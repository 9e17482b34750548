// On demand: what the gateway adds to one request, in one process. A trivial upstream answers instantly, so the
// difference between calling it directly and through the gateway is the gateway's own cost.
// node_modules/.bin/node test/bench/gateway-profile.ts
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { createPrincipalSigner, generateInternalKeyPair, type Principal } from '@sigil/kit/auth';
import { createLogger } from '@sigil/kit/log';
import { createGatewayApp } from '@sigil/gateway';
import { createAuthenticator } from '@sigil/gateway/authenticator';

const N = Number(process.env.BENCH_REQUESTS ?? 2000);
const keys = await generateInternalKeyPair();
const signPrincipal = await createPrincipalSigner(keys.privateJwk);
const principal: Principal = { kind: 'api_key', organizationId: 'org_bench', actorId: 'key_bench', apiKeyId: 'key_bench', mode: 'test', permissions: ['template:read'] };
const body = JSON.stringify({ id: 'tpl_x', object: 'template', name: 'bench' });
const upstream = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body)).listen(0, '127.0.0.1');
await new Promise((r) => upstream.once('listening', r));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
const log = createLogger('gateway', process.env.LOG_LEVEL ?? 'info');
const authenticator = createAuthenticator({
  accountsUrl: 'http://accounts.invalid',
  signPrincipal,
  log,
  fetch: (async () => Response.json({ principal, expiresAt: null })) as unknown as typeof fetch,
});
const gateway = await createGatewayApp({
  serviceUrls: { templates: upstreamUrl },
  signPrincipal,
  log,
  authenticator,
  supergraphSdl: readFileSync(new URL('../../gateway/supergraph.graphql', import.meta.url), 'utf8'),
});
const server = createServer(gateway.app).listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const gatewayUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
const key = `sgl_test_${'a'.repeat(32)}`;

async function p50(label: string, url: string, headers: Record<string, string>): Promise<number> {
  for (let i = 0; i < 200; i++) await (await fetch(url, { headers })).arrayBuffer();
  const times: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${label}: ${res.status}`);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(N / 2)] as number;
  console.log(`${label.padEnd(40)} p50 ${median.toFixed(3)} ms`);
  return median;
}
const direct = await p50('upstream directly', `${upstreamUrl}/v1/templates/tpl_x`, {});
const through = await p50('through the gateway (API key)', `${gatewayUrl}/v1/templates/tpl_x`, { authorization: `Bearer ${key}` });
console.log(`gateway adds ${(through - direct).toFixed(3)} ms`);
server.close();
upstream.close();
await gateway.close();
