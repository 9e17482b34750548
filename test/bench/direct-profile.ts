// On demand: where the time of a direct `GET /v1/templates/{id}` goes, piece by piece, in one process.
// node_modules/.bin/node test/bench/direct-profile.ts   (needs POSTGRES_URL or Postgres on 127.0.0.1:5432)
import { createServer } from 'node:http';
import { createLogger } from '@sigil/kit/log';
import { createTestAuth, freshTestDatabase, apiKeyPrincipal } from '@sigil/kit/testing';
import { createApp } from '@sigil/templates';
import { createDb } from '@sigil/templates/db';
import pg from 'pg';

const N = Number(process.env.BENCH_REQUESTS ?? 1000);
const url = await freshTestDatabase('bench_direct_profile', new URL('../../prisma/templates/migrations', import.meta.url).pathname);
const db = createDb(url);
const auth = await createTestAuth();
const principal = apiKeyPrincipal({ permissions: ['template:read', 'template:write'] });
const headers = await auth.headers(principal);

async function timeIt(label: string, run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 100; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const p50 = times[Math.floor(N / 2)] as number;
  console.log(`${label.padEnd(52)} p50 ${p50.toFixed(3)} ms  p90 ${(times[Math.floor(N * 0.9)] as number).toFixed(3)} ms`);
  return p50;
}

for (const level of ['info', 'silent']) {
  // Reads only: the file store is never reached, the converter never starts LibreOffice.
  const noFiles = () => Promise.reject(new Error('this benchmark uploads no files'));
  const files = { store: { put: noFiles, get: noFiles }, converter: { toPdf: noFiles, close: async () => {} }, printer: { print: noFiles, close: async () => {} }, maxBytes: 1024, maxPages: 1 };
  const { app } = await createApp({ db, log: createLogger('templates', level), verifyPrincipal: auth.verify, files });
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const created = await (await fetch(`${base}/v1/templates`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"name":"bench"}' })).json() as { id: string };
  await timeIt(`HTTP GET /v1/templates/{id} (log level ${level})`, async () => (await fetch(`${base}/v1/templates/${created.id}`, { headers })).arrayBuffer());
  await timeIt('HTTP GET /healthz (Express + request id only)', async () => (await fetch(`${base}/healthz`)).arrayBuffer());
  if (level === 'silent') {
    await timeIt('Prisma findFirst (query compiler + adapter-pg)', () => db.template.findFirst({ where: { id: created.id, organizationId: principal.organizationId } }));
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    await timeIt('pg query of the same row', () => pool.query('SELECT * FROM templates WHERE id = $1 AND organization_id = $2', [created.id, principal.organizationId]));
    await pool.end();
    await timeIt('principal verification (remembered token)', () => auth.verify(headers['x-sigil-principal'] as string));
  }
  server.close();
}
await db.$disconnect();
