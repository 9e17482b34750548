// Seeds the dashboard bench's organization with many envelopes, fast: a few through the API (the real create, render
// and send), then copies of those rows inserted straight into the envelopes service's database. Creating 10,000
// through the API would take about 5 minutes of both CPUs (docs/benchmarks.md: 33.6 envelopes created and sent per
// second) and 10,000 renders in S3, none of which the list reads; the copies are the service's own rows with new ids
// and creation times, so their shape is exactly what the service writes, whatever its schema is at the time.
import { PDFDocument, StandardFonts } from 'pdf-lib';
import pg from 'pg';
import { newId } from '@sigil/kit/ids';
import type { Stack } from '@sigil/local-stack';

/** Envelopes created through the API before the copies (the newest of the list). */
const REAL_ENVELOPES = 20;
const COPIES_PER_INSERT = 2_000;

export interface Seeded {
  templateId: string;
  total: number;
  realSeconds: number;
  copySeconds: number;
}

type Api = (method: string, url: string, body?: unknown, contentType?: string) => Promise<Record<string, unknown>>;

/** The REST API through the gateway with the seeded test key. */
export function apiOf(stack: Stack): Api {
  return async (method, url, body, contentType = 'application/json') => {
    const headers = { authorization: `Bearer ${stack.seed.testApiKey}`, 'content-type': contentType };
    const res = await fetch(`${stack.gatewayUrl}${url}`, { method, headers, body: body === undefined ? undefined : body instanceof Buffer ? body : JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
}

/** `total` envelopes in the seed organization's test mode, newest first as the API lists them. */
export async function seedEnvelopes(stack: Stack, namespace: string, total: number): Promise<Seeded> {
  const api = apiOf(stack);
  let started = performance.now();
  const templateId = await publishedTemplate(api);
  const realIds = await createThroughApi(api, templateId, Math.min(REAL_ENVELOPES, total));
  const realSeconds = (performance.now() - started) / 1000;
  started = performance.now();
  await insertCopies(envelopesDatabaseUrl(stack, namespace), realIds, total - realIds.length);
  return { templateId, total, realSeconds, copySeconds: (performance.now() - started) / 1000 };
}

export function envelopesDatabaseUrl(stack: Stack, namespace: string): string {
  const url = new URL(stack.infra.postgres.adminUrl);
  url.pathname = `/${namespace}sigil_envelopes`;
  return url.toString();
}

async function publishedTemplate(api: Api): Promise<string> {
  const templateId = (await api('POST', '/v1/templates', { name: 'Master services agreement' })).id as string;
  const file = (await api('POST', `/v1/templates/${templateId}/files`, await twoPages(), 'application/pdf')).id;
  await api('PUT', `/v1/templates/${templateId}/draft`, {
    file,
    roles: [{ name: 'client', order: 1 }, { name: 'counsel', order: 2 }],
    fields: [
      { id: 'company', role: 'client', type: 'text', required: true, page: 1, x: 72, y: 100, width: 300, height: 24, variable: 'company' },
      { id: 'client_signature', role: 'client', type: 'signature', required: true, page: 2, x: 72, y: 600, width: 200, height: 40 },
      { id: 'counsel_signature', role: 'counsel', type: 'signature', required: true, page: 2, x: 320, y: 600, width: 200, height: 40 },
    ],
    variables: [{ name: 'company', required: true }],
  });
  await api('POST', `/v1/templates/${templateId}/publish`);
  return templateId;
}

/** Envelopes created by 4 clients, each waited for until sent (rendered, first turn e-mailed). */
async function createThroughApi(api: Api, templateId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        const n = next++;
        const created = await api('POST', '/v1/envelopes', {
          template: templateId,
          externalId: `PO-${String(100_000 + n)}`,
          recipients: [{ role: 'client', name: `Client ${n}`, email: `client${n}@example.com` }, { role: 'counsel', name: 'Dana Counsel', email: 'counsel@example.com' }],
          variables: { company: `Company ${n}` },
        });
        ids.push(created.id as string);
      }
    }),
  );
  for (const id of ids) await waitUntilSent(api, id);
  return ids;
}

async function waitUntilSent(api: Api, id: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const status = (await api('GET', `/v1/envelopes/${id}`)).status;
    if (status !== 'rendering') return;
    if (Date.now() > deadline) throw new Error(`envelope ${id} still rendering after 2 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * `count` copies of the real envelopes (round robin) and their recipients, each with a new id, created one minute
 * before the previous one (so the list's order is the copies' order, older than every real envelope). Every other
 * column is the source row's, listed from the table itself so a new column is copied too.
 */
async function insertCopies(databaseUrl: string, sourceIds: string[], count: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const envelopeColumns = await columnsOf(client, 'envelopes');
    const recipientColumns = await columnsOf(client, 'recipients');
    const oldest = (await client.query<{ t: Date }>('SELECT min(created_at) AS t FROM envelopes WHERE id = ANY($1)', [sourceIds])).rows[0]?.t ?? new Date();
    for (let from = 0; from < count; from += COPIES_PER_INSERT) {
      const batch = Array.from({ length: Math.min(COPIES_PER_INSERT, count - from) }, (_, i) => from + i);
      const ids = batch.map(() => newId('env'));
      const sources = batch.map((n) => sourceIds[n % sourceIds.length] as string);
      const createdAt = batch.map((n) => new Date(oldest.getTime() - (n + 1) * 60_000));
      await client.query('BEGIN');
      await client.query(copyEnvelopesSql(envelopeColumns), [ids, sources, createdAt]);
      await client.query(copyRecipientsSql(recipientColumns), [ids, sources]);
      await client.query('COMMIT');
    }
    // What autovacuum would have done by the time an organization has 10,000 envelopes: the planner's statistics.
    await client.query('ANALYZE envelopes');
    await client.query('ANALYZE recipients');
  } finally {
    await client.end();
  }
}

async function columnsOf(client: pg.Client, table: string): Promise<string[]> {
  const result = await client.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position", [table]);
  return result.rows.map((row) => row.column_name);
}

const quoted = (column: string) => `"${column.replace(/"/g, '""')}"`;

function copyEnvelopesSql(columns: string[]): string {
  const replaced: Record<string, string> = { id: 'n.id', created_at: 'n.created_at', updated_at: 'n.created_at' };
  const values = columns.map((column) => replaced[column] ?? `e.${quoted(column)}`);
  return `INSERT INTO envelopes (${columns.map(quoted).join(', ')})
    SELECT ${values.join(', ')} FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS n(id, source_id, created_at) JOIN envelopes e ON e.id = n.source_id`;
}

function copyRecipientsSql(columns: string[]): string {
  // A recipient id is rcp_ + 24 characters (its envelope and role make it unique), like newId's.
  const replaced: Record<string, string> = { id: "'rcp_' || substr(md5(n.id || r.role), 1, 24)", envelope_id: 'n.id' };
  const values = columns.map((column) => replaced[column] ?? `r.${quoted(column)}`);
  return `INSERT INTO recipients (${columns.map(quoted).join(', ')})
    SELECT ${values.join(', ')} FROM unnest($1::text[], $2::text[]) AS n(id, source_id) JOIN recipients r ON r.envelope_id = n.source_id`;
}

async function twoPages(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= 2; i++) doc.addPage([612, 792]).drawText(`Master services agreement, page ${i}`, { x: 72, y: 740, size: 14, font });
  return Buffer.from(await doc.save());
}
