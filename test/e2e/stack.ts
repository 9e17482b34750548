import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { startStack, type Stack } from '@sigil/local-stack';
import { randomBase62 } from '@sigil/kit/ids';

export interface TestStack extends Stack {
  namespace: string;
  /** Where the stack keeps its state; each process logs to `logs/<name>.log` under it. */
  stateDir: string;
  /** SQL against one service's database (for set-ups the API cannot make, like an expired key). */
  sql(service: 'accounts' | 'templates', text: string, params?: unknown[]): Promise<pg.QueryResult>;
}

/**
 * The whole platform as separate processes, on the servers the test run provisioned, in its own
 * databases and consumer names so several stacks can share those servers.
 */
export async function startTestStack(options: { logLevel?: string } = {}): Promise<TestStack> {
  const namespace = `e2e_${randomBase62(8).toLowerCase()}_`;
  const stateDir = await mkdtemp(path.join(tmpdir(), 'sigil-e2e-'));
  // Anchors every second, so tests of public verification wait little.
  const stack = await startStack({ stateDir, env: { STACK_ANCHOR_INTERVAL_MS: '1000', ...process.env }, namespace, logLevel: options.logLevel ?? process.env.TEST_LOG_LEVEL ?? 'warn' });
  return {
    ...stack,
    namespace,
    stateDir,
    async sql(service, text, params = []) {
      const url = new URL(stack.infra.postgres.adminUrl);
      url.pathname = `/${namespace}sigil_${service}`;
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        return await client.query(text, params);
      } finally {
        await client.end();
      }
    },
  };
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function call<T = any>(base: string, method: string, pathName: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply<T>> {
  const res = await fetch(`${base}${pathName}`, {
    method,
    headers: { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
    body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
  });
  return readReply<T>(res);
}

/** An answer as a Reply: the body parsed as JSON when it is JSON, its text otherwise. */
export async function readReply<T = any>(res: Response): Promise<Reply<T>> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body: body as T };
}

/** Reads until `ready` holds (every 100 ms, for at most `ms`), and answers the reading that did. */
export async function until<T>(read: () => Promise<T>, ready: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ready(value)) return value;
    if (Date.now() > deadline) throw new Error(`not ready in time: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

export async function signIn(base: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${base}/v1/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}`);
  return (res.headers.getSetCookie().find((c) => c.startsWith('sigil_session=')) ?? '').split(';')[0] as string;
}

export async function signUp(base: string, email: string, organizationName: string): Promise<{ cookie: string; organizationId: string }> {
  const res = await fetch(`${base}/v1/auth/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ organizationName, name: 'Test Owner', email, password: 'correct horse battery staple' }),
  });
  if (res.status !== 201) throw new Error(`sign-up answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { organization: { id: string } };
  return { cookie: (res.headers.getSetCookie().find((c) => c.startsWith('sigil_session=')) ?? '').split(';')[0] as string, organizationId: body.organization.id };
}

export async function createKey(base: string, cookie: string, body: object): Promise<{ id: string; secret: string }> {
  const res = await call(base, 'POST', '/v1/api-keys', { body, headers: { cookie } });
  if (res.status !== 201) throw new Error(`api key creation answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A published template with one role whose one field is a signature on a one-page PDF; answers its id. */
export async function publishOneRoleTemplate(base: string, headers: Record<string, string>, name: string, role: string): Promise<string> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([612, 792]).drawText(name, { x: 50, y: 740, size: 14, font });
  const templateId = (await call(base, 'POST', '/v1/templates', { headers, body: { name } })).body.id as string;
  const upload = await fetch(`${base}/v1/templates/${templateId}/files`, { method: 'POST', headers: { ...headers, 'content-type': 'application/pdf' }, body: Buffer.from(await doc.save()) });
  if (upload.status !== 201) throw new Error(`template file upload answered ${upload.status}: ${await upload.text()}`);
  const draft = await call(base, 'PUT', `/v1/templates/${templateId}/draft`, {
    headers,
    body: {
      file: ((await upload.json()) as { id: string }).id,
      roles: [{ name: role, order: 1 }],
      fields: [{ id: 'signature', role, type: 'signature', required: true, page: 1, x: 72, y: 600, width: 200, height: 40 }],
      variables: [],
    },
  });
  if (draft.status !== 200) throw new Error(`template draft answered ${draft.status}: ${JSON.stringify(draft.body)}`);
  const published = await call(base, 'POST', `/v1/templates/${templateId}/publish`, { headers });
  if (published.status !== 201) throw new Error(`template publish answered ${published.status}`);
  return templateId;
}
