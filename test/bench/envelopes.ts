// On demand: `node_modules/.bin/node test/bench/envelopes.ts`. Create-to-sent latency of envelopes at 8 concurrent
// clients (from the create request to the `envelope.ready` event: rendered, stored, first turn sent), envelopes created
// per second, and the memory of the services involved afterwards. Baseline in the same run: the create answer alone
// (what the caller waits for), so the ratio is the cost of the render job on top of it.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { connectBus } from '@sigil/kit/bus';
import { startStack } from '@sigil/local-stack';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const ENVELOPES = Number(process.env.BENCH_ENVELOPES ?? 400);
const WARMUP = 16;

const stateDir = await mkdtemp(path.join(tmpdir(), 'sigil-bench-envelopes-'));
const stack = await startStack({ stateDir, env: process.env, namespace: `benchenv_${Date.now()}_`, logLevel: 'warn' });
const bus = await connectBus(stack.infra.nats.url, 'bench');
try {
  const auth = { authorization: `Bearer ${stack.seed.testApiKey}`, 'content-type': 'application/json' };
  const api = async (method: string, url: string, body?: unknown, headers: Record<string, string> = auth) => {
    const res = await fetch(`${stack.gatewayUrl}${url}`, { method, headers, body: body === undefined ? undefined : body instanceof Buffer ? body : JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const templateId = (await api('POST', '/v1/templates', { name: 'Bench agreement' })).id as string;
  const file = (await api('POST', `/v1/templates/${templateId}/files`, await threePages(), { ...auth, 'content-type': 'application/pdf' })).id;
  await api('PUT', `/v1/templates/${templateId}/draft`, {
    file,
    roles: [{ name: 'client', order: 1 }, { name: 'counsel', order: 2 }],
    fields: [
      { id: 'company', role: 'client', type: 'text', required: true, page: 1, x: 72, y: 100, width: 300, height: 24, variable: 'company' },
      { id: 'client_signature', role: 'client', type: 'signature', required: true, page: 3, x: 72, y: 600, width: 200, height: 40 },
      { id: 'counsel_signature', role: 'counsel', type: 'signature', required: true, page: 3, x: 320, y: 600, width: 200, height: 40 },
    ],
    variables: [{ name: 'company', required: true }],
  });
  await api('POST', `/v1/templates/${templateId}/publish`);

  const ready = new Map<string, (at: number) => void>();
  const early = new Map<string, number>();
  await bus.listen(`sigil.events.envelope.ready`, (payload) => {
    const id = (payload as { data?: { envelopeId?: string } }).data?.envelopeId;
    if (!id) return;
    const now = performance.now();
    const resolve = ready.get(id);
    if (resolve) resolve(now);
    else early.set(id, now);
  });
  const body = (n: number) => ({
    template: templateId,
    recipients: [{ role: 'client', name: `Client ${n}`, email: `client${n}@example.com` }, { role: 'counsel', name: 'Counsel', email: 'counsel@example.com' }],
    variables: { company: `Company ${n}` },
  });

  async function one(n: number): Promise<{ answer: number; sent: number }> {
    const t0 = performance.now();
    const created = await api('POST', '/v1/envelopes', body(n));
    const answered = performance.now();
    const id = created.id as string;
    const at = early.get(id) ?? (await new Promise<number>((resolve) => ready.set(id, resolve)));
    return { answer: answered - t0, sent: at - t0 };
  }

  for (let i = 0; i < WARMUP; i++) await one(-i);
  const results: Array<{ answer: number; sent: number }> = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (next < ENVELOPES) results.push(await one(next++));
  }));
  const seconds = (performance.now() - started) / 1000;

  const answer = results.map((r) => r.answer);
  const sent = results.map((r) => r.sent);
  console.log(`\n${ENVELOPES} envelopes (3-page PDF, a variable, two recipients) by ${CLIENTS} concurrent clients through the gateway:`);
  console.log(`  create answered (baseline): p50 ${ms(percentile(answer, 50))}  p99 ${ms(percentile(answer, 99))}`);
  console.log(`  create to sent:             p50 ${ms(percentile(sent, 50))}  p99 ${ms(percentile(sent, 99))}   (${(percentile(sent, 50) / percentile(answer, 50)).toFixed(2)}x the answer at p50)`);
  console.log(`  throughput: ${(ENVELOPES / seconds).toFixed(1)} envelopes created and sent per second`);
  console.log('\nResident memory afterwards:');
  for (const name of ['envelopes', 'signing', 'templates', 'gateway']) {
    const pid = stack.processes.find((p) => p.name === name)?.pid ?? -1;
    console.log(`  ${name.padEnd(10)} ${(await rssMiB(pid)).toFixed(0)} MiB`);
  }
} finally {
  await bus.close();
  await stack.stop();
}

async function threePages(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= 3; i++) doc.addPage([612, 792]).drawText(`Services agreement, page ${i}`, { x: 72, y: 740, size: 14, font });
  return Buffer.from(await doc.save());
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
