// On demand (`npm run bench`): start-up time of the whole stack, memory of each process after 1,000 requests and after
// the whole run, and the gateway's added latency: `GET /v1/templates/{id}` straight to the templates service, through a
// bare keep-alive proxy process (the floor of any extra hop on this machine), and through the gateway, as ratios of
// medians.
import { spawn } from 'node:child_process';
import { readFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPrincipalSigner, PRINCIPAL_HEADER, type InternalKeyPair, type Principal } from '@sigil/kit/auth';
import { startStack } from '@sigil/local-stack';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const WARMUP = 100;
const ROUNDS = 4;

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
  const principal: Principal = { kind: 'api_key', organizationId: stack.seed.organizationId, actorId: 'key_bench', apiKeyId: 'key_bench', mode: 'test', permissions: ['template:read'] };
  const token = await sign(principal); // valid 60 s: re-signed per round below
  const proxy = await startBareProxy(stack.serviceUrls.templates, token);

  const path1 = `/v1/templates/${created.id}`;
  const series = { direct: [] as number[], bare: [] as number[], gateway: [] as number[] };
  // CPU time each hop spends per request: unlike latency, hardly moved by whatever else the machine is doing.
  const gatewayPid = stack.processes.find((p) => p.name === 'gateway')?.pid ?? -1;
  const templatesPid = stack.processes.find((p) => p.name === 'templates')?.pid ?? -1;
  const cpu = { templates: 0, bare: 0, gateway: 0 };
  const rssAfterFirstSeries = new Map<string, number>();
  // Interleave the series so drift on a shared machine hits all alike.
  for (let round = 0; round < ROUNDS; round++) {
    const fresh = await sign(principal);
    const templatesBefore = await cpuMs(templatesPid);
    series.direct.push(...(await measure(`${stack.serviceUrls.templates}${path1}`, { [PRINCIPAL_HEADER]: fresh })));
    cpu.templates += (await cpuMs(templatesPid)) - templatesBefore;
    // Issue 7's memory target is taken after 1,000 requests: the first direct series (warm-up included) is that point.
    if (round === 0) for (const p of stack.processes) rssAfterFirstSeries.set(p.name, await rssMiB(p.pid));
    const bareBefore = await cpuMs(proxy.pid);
    series.bare.push(...(await measure(`${proxy.url}${path1}`, { authorization: `Bearer ${key}` })));
    cpu.bare += (await cpuMs(proxy.pid)) - bareBefore;
    const gatewayBefore = await cpuMs(gatewayPid);
    series.gateway.push(...(await measure(`${stack.gatewayUrl}${path1}`, { authorization: `Bearer ${key}` })));
    cpu.gateway += (await cpuMs(gatewayPid)) - gatewayBefore;
  }
  const d = median(series.direct);
  const b = median(series.bare);
  const g = median(series.gateway);

  console.log(`\nStack start-up (infra + migrations + services + gateway + seed): ${(startupMs / 1000).toFixed(2)} s`);
  console.log(`Infra: postgres ${stack.infra.postgres.source}, nats ${stack.infra.nats.source}, s3 ${stack.infra.s3.source}, smtp ${stack.infra.smtp.source}`);
  console.log(`\nResident memory: after templates served its first ${REQUESTS + WARMUP} requests, and after all ${ROUNDS * (REQUESTS + WARMUP)} per series:`);
  console.log('  (PSS shares the pages of the node binary and libraries between the processes that map them)');
  for (const p of stack.processes) {
    const first = rssAfterFirstSeries.get(p.name) ?? 0;
    console.log(`  ${p.name.padEnd(15)} pid ${p.pid}  RSS ${first.toFixed(1)} MiB → ${(await rssMiB(p.pid)).toFixed(1)} MiB  PSS ${(await pssMiB(p.pid)).toFixed(1)} MiB`);
  }
  console.log(`  ${'launcher'.padEnd(15)} pid ${process.pid}  ${(process.memoryUsage().rss / 2 ** 20).toFixed(1)} MiB (includes embedded S3 and SMTP sink when started here)`);
  console.log(`\nGET /v1/templates/{id}, ${series.direct.length} requests per series, sequential, keep-alive:`);
  console.log(`  templates service directly  median ${d.toFixed(3)} ms  p90 ${percentile(series.direct, 0.9).toFixed(3)} ms`);
  console.log(`  through a bare proxy        median ${b.toFixed(3)} ms  p90 ${percentile(series.bare, 0.9).toFixed(3)} ms`);
  console.log(`  through the gateway         median ${g.toFixed(3)} ms  p90 ${percentile(series.gateway, 0.9).toFixed(3)} ms`);
  console.log(`  ratio gateway/direct        ${(g / d).toFixed(2)}x  (added ${(g - d).toFixed(3)} ms)`);
  console.log(`  ratio bare proxy/direct     ${(b / d).toFixed(2)}x  (the floor of one more hop)`);
  console.log(`  ratio gateway/bare proxy    ${(g / b).toFixed(2)}x  (what the gateway's own work costs)`);
  const perRequest = (ms: number) => `${((ms * 1000) / (ROUNDS * (REQUESTS + WARMUP))).toFixed(0)} µs`;
  console.log(`\nCPU per request (user + system, /proc/<pid>/stat): templates ${perRequest(cpu.templates)} (direct series), bare proxy ${perRequest(cpu.bare)}, gateway ${perRequest(cpu.gateway)}`);
  proxy.stop();
} finally {
  await stack.stop();
}

async function startBareProxy(target: string, token: string): Promise<{ url: string; pid: number; stop(): void }> {
  const portFile = path.join(stateDir, 'bare-proxy.port');
  const child = spawn(process.execPath, [new URL('./bare-proxy.ts', import.meta.url).pathname, target, PRINCIPAL_HEADER, token, portFile], { stdio: 'inherit' });
  for (let i = 0; i < 200; i++) {
    const port = await readFile(portFile, 'utf8').catch(() => '');
    if (port) return { url: `http://127.0.0.1:${port}`, pid: child.pid ?? -1, stop: () => void child.kill() };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  child.kill();
  throw new Error('the bare proxy did not start');
}

async function measure(url: string, headers: Record<string, string>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await (await fetch(url, { headers })).arrayBuffer();
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const start = performance.now();
    const res = await fetch(url, { headers });
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

/** CPU time (user + system) a process has used so far, in milliseconds (clock ticks of 10 ms). */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function pssMiB(pid: number): Promise<number> {
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  return Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) / 1024;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}
