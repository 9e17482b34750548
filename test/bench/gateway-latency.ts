// On demand (`npm run bench`): start-up time of the whole stack, memory of each process, and the
// gateway's added latency against calling the templates service directly, as a ratio of medians.
import { readFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPrincipalSigner, PRINCIPAL_HEADER, type InternalKeyPair, type Principal } from '@sigil/kit/auth';
import { startStack } from '@sigil/local-stack';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const WARMUP = 50;

const stateDir = await mkdtemp(path.join(tmpdir(), 'sigil-bench-'));
const t0 = performance.now();
const stack = await startStack({ stateDir, env: process.env, namespace: `bench_${Date.now()}_`, logLevel: 'warn' });
const startupMs = performance.now() - t0;

try {
  const key = stack.seed.testApiKey;
  const created = await fetch(`${stack.gatewayUrl}/v1/templates`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Benchmark template' }),
  }).then((r) => r.json() as Promise<{ id: string }>);

  const keys = JSON.parse(await readFile(path.join(stateDir, 'internal-jwt-key.json'), 'utf8')) as InternalKeyPair;
  const sign = await createPrincipalSigner(keys.privateJwk);
  const principal: Principal = {
    kind: 'api_key',
    organizationId: stack.seed.organizationId,
    actorId: 'key_bench',
    apiKeyId: 'key_bench',
    mode: 'test',
    permissions: ['template:read'],
  };

  const direct = () => measure(`${stack.serviceUrls.templates}/v1/templates/${created.id}`, async () => ({ [PRINCIPAL_HEADER]: await sign(principal) }));
  const viaGateway = () => measure(`${stack.gatewayUrl}/v1/templates/${created.id}`, async () => ({ authorization: `Bearer ${key}` }));

  // Interleave the two series so drift on a shared machine hits both alike.
  const directTimes: number[] = [];
  const gatewayTimes: number[] = [];
  for (let round = 0; round < 4; round++) {
    directTimes.push(...(await direct()));
    gatewayTimes.push(...(await viaGateway()));
  }
  const d = median(directTimes);
  const g = median(gatewayTimes);

  console.log(`\nStack start-up (infra + migrations + services + gateway + seed): ${(startupMs / 1000).toFixed(2)} s`);
  console.log(`Infra: postgres ${stack.infra.postgres.source}, nats ${stack.infra.nats.source}, s3 ${stack.infra.s3.source}, smtp ${stack.infra.smtp.source}`);
  console.log('\nResident memory after the run:');
  for (const p of stack.processes) console.log(`  ${p.name.padEnd(10)} pid ${p.pid}  ${(await rssMiB(p.pid)).toFixed(1)} MiB`);
  console.log(`  ${'launcher'.padEnd(10)} pid ${process.pid}  ${(process.memoryUsage().rss / 2 ** 20).toFixed(1)} MiB (includes embedded S3 and SMTP sink when started here)`);
  console.log(`\nGET /v1/templates/{id}, ${directTimes.length} requests each, sequential, keep-alive:`);
  console.log(`  templates service directly  median ${d.toFixed(3)} ms  p90 ${percentile(directTimes, 0.9).toFixed(3)} ms`);
  console.log(`  through the gateway         median ${g.toFixed(3)} ms  p90 ${percentile(gatewayTimes, 0.9).toFixed(3)} ms`);
  console.log(`  ratio gateway/direct        ${(g / d).toFixed(2)}x  (added ${(g - d).toFixed(3)} ms)`);
} finally {
  await stack.stop();
}

async function measure(url: string, headers: () => Promise<Record<string, string>>): Promise<number[]> {
  const h = await headers();
  for (let i = 0; i < WARMUP; i++) await (await fetch(url, { headers: h })).arrayBuffer();
  const times: number[] = [];
  for (let i = 0; i < REQUESTS / 4; i++) {
    const start = performance.now();
    const res = await fetch(url, { headers: h });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    times.push(performance.now() - start);
  }
  return times;
}

function median(values: number[]): number {
  return percentile(values, 0.5);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}
