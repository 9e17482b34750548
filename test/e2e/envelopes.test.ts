import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { call, startTestStack, until, type Reply, type TestStack } from './stack.ts';

/**
 * A new user's first envelope through the gateway, with the printed test key: upload a PDF to a template, place the
 * fields of two roles, publish, send an envelope to two recipients, and watch it render and reach `sent`.
 */
let stack: TestStack;
let auth: Record<string, string>;

async function twoPagePdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const n of [1, 2]) doc.addPage([612, 792]).drawText(`Consulting agreement, page ${n}`, { x: 50, y: 740, size: 14, font });
  return Buffer.from(await doc.save());
}

// A local webhook receiver, registered with a key the owner made for it (webhook management needs org:manage).
const hooks: Array<{ headers: Record<string, string>; body: string }> = [];
let receiver: Server;
let webhookSecret: string;

beforeAll(async () => {
  stack = await startTestStack();
  auth = { authorization: `Bearer ${stack.seed.testApiKey}` };
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      hooks.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const signIn = await fetch(`${stack.gatewayUrl}/v1/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: stack.seed.ownerEmail, password: stack.seed.ownerPassword }) });
  const cookie = (signIn.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
  const manager = await call(stack.gatewayUrl, 'POST', '/v1/api-keys', { headers: { cookie }, body: { name: 'webhooks', mode: 'test', scopes: ['org:manage'] } });
  expect(manager.status, JSON.stringify(manager.body)).toBe(201);
  const endpoint = await call(stack.gatewayUrl, 'POST', '/v1/webhook-endpoints', {
    headers: { authorization: `Bearer ${manager.body.secret}` },
    body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/sigil`, description: 'e2e receiver' },
  });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  webhookSecret = endpoint.body.secret;
}, 120_000);
afterAll(async () => {
  receiver?.closeAllConnections();
  receiver?.close();
  await stack?.stop();
});

describe('sending an envelope through the gateway', () => {
  let templateId: string;

  it('publishes a template with two roles from an uploaded PDF', async () => {
    templateId = (await call(stack.gatewayUrl, 'POST', '/v1/templates', { body: { name: 'Consulting agreement' }, headers: auth })).body.id;
    const upload = await fetch(`${stack.gatewayUrl}/v1/templates/${templateId}/files`, { method: 'POST', headers: { ...auth, 'content-type': 'application/pdf' }, body: await twoPagePdf() });
    expect(upload.status).toBe(201);
    const file = ((await upload.json()) as { id: string }).id;
    const draft = await call(stack.gatewayUrl, 'PUT', `/v1/templates/${templateId}/draft`, {
      headers: auth,
      body: {
        file,
        roles: [{ name: 'client', order: 1 }, { name: 'consultant', order: 2 }],
        fields: [
          { id: 'client_company', role: 'client', type: 'text', required: true, page: 1, x: 72, y: 120, width: 300, height: 24, variable: 'company' },
          { id: 'client_signature', role: 'client', type: 'signature', required: true, page: 2, x: 72, y: 600, width: 200, height: 40 },
          { id: 'consultant_signature', role: 'consultant', type: 'signature', required: true, page: 2, x: 320, y: 600, width: 200, height: 40 },
        ],
        variables: [{ name: 'company', required: true }],
      },
    });
    expect(draft.status, JSON.stringify(draft.body)).toBe(200);
    expect((await call(stack.gatewayUrl, 'POST', `/v1/templates/${templateId}/publish`, { headers: auth })).status).toBe(201);
  });

  it('creates an envelope that renders and is sent to the first recipient; the template can no longer be deleted', async () => {
    const created = await call(stack.gatewayUrl, 'POST', '/v1/envelopes', {
      headers: auth,
      body: {
        template: templateId,
        recipients: [
          { role: 'client', name: 'Ada Lovelace', email: 'ada@example.com' },
          { role: 'consultant', name: 'Grace Hopper', email: 'grace@example.com' },
        ],
        variables: { company: 'Analytical Engines Ltd' },
        externalId: 'crm-1001',
        dedupeOn: 'external_id',
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ status: 'rendering', testMode: true, templateVersion: 1 });
    const sent = await until(() => call(stack.gatewayUrl, 'GET', `/v1/envelopes/${created.body.id}`, { headers: auth }), (r) => r.body.status === 'sent');
    expect(sent.body.recipients.map((r: { role: string; status: string }) => [r.role, r.status])).toEqual([['client', 'sent'], ['consultant', 'pending']]);
    const document = await fetch(`${stack.gatewayUrl}/v1/envelopes/${created.body.id}/document`, { headers: auth });
    expect(document.status).toBe(200);
    expect(document.headers.get('content-type')).toBe('application/pdf');
    expect((await PDFDocument.load(Buffer.from(await document.arrayBuffer()))).getPageCount()).toBe(2);

    const again = await call(stack.gatewayUrl, 'POST', '/v1/envelopes', { headers: auth, body: { template: templateId, externalId: 'crm-1001', dedupeOn: 'external_id' } });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-deduplicated')).toBe('true');
    expect(again.body.id).toBe(created.body.id);

    const remove = await call(stack.gatewayUrl, 'DELETE', `/v1/templates/${templateId}`, { headers: auth });
    expect(remove.status).toBe(409);
    expect(remove.body.type).toMatch(/template-in-use$/);
  });

  it('is signed by both recipients through signing sessions, in order, and completes with its values', async () => {
    const envelope = (await call(stack.gatewayUrl, 'GET', '/v1/envelopes?q=crm-1001', { headers: auth })).body.data[0];
    const [client, consultant] = envelope.recipients as Array<{ id: string }>;
    const early = await call(stack.gatewayUrl, 'POST', `/v1/envelopes/${envelope.id}/sessions`, { headers: auth, body: { recipient: consultant!.id } });
    expect(early.status).toBe(409);
    for (const [recipient, field] of [[client!, 'client_signature'], [consultant!, 'consultant_signature']] as const) {
      const minted = await call(stack.gatewayUrl, 'POST', `/v1/envelopes/${envelope.id}/sessions`, { headers: auth, body: { recipient: recipient.id } });
      expect(minted.status, JSON.stringify(minted.body)).toBe(201);
      expect(minted.body.url).toBe(`${stack.gatewayUrl}/sign#token=${minted.body.token}`);
      const exchanged = await call(stack.gatewayUrl, 'POST', '/v1/signing/exchange', { body: { token: minted.body.token } });
      expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
      expect((await call(stack.gatewayUrl, 'POST', '/v1/signing/exchange', { body: { token: minted.body.token } })).status).toBe(401);
      const signer = { authorization: `Bearer ${exchanged.body.accessToken}` };
      const view = await call(stack.gatewayUrl, 'GET', '/v1/signing/session', { headers: signer });
      expect(view.status, JSON.stringify(view.body)).toBe(200);
      expect(view.body.fields.filter((f: { readOnly: boolean }) => !f.readOnly).map((f: { id: string }) => f.id)).toEqual([field]);
      const pdf = await fetch(`${stack.gatewayUrl}/v1/signing/document`, { headers: signer });
      expect(pdf.headers.get('content-type')).toBe('application/pdf');
      const signed = await call(stack.gatewayUrl, 'POST', '/v1/signing/submit', { headers: signer, body: { fields: { [field]: { kind: 'typed', text: 'Signed by me' } }, consent: true } });
      expect(signed.status, JSON.stringify(signed.body)).toBe(200);
      expect(signed.body.status).toBe('completed');
    }
    const done = (await call(stack.gatewayUrl, 'GET', `/v1/envelopes/${envelope.id}`, { headers: auth })).body;
    expect(done).toMatchObject({ status: 'completed', seal: 'pending' });
    expect(done.recipients.map((r: { status: string }) => r.status)).toEqual(['completed', 'completed']);
  });

  it("e-mails a member's signing link to the stack's inbox; the link opens a signing session once", async () => {
    const owner = stack.seed.ownerEmail;
    const since = new Date().toISOString();
    const created = await call(stack.gatewayUrl, 'POST', '/v1/envelopes', {
      headers: auth,
      body: { template: templateId, recipients: [{ role: 'client', name: 'The Owner', email: owner }, { role: 'consultant', name: 'Grace', email: 'grace@example.com' }], variables: { company: 'Y' } },
    });
    expect(created.status).toBe(201);
    let link: string | undefined;
    for (let i = 0; i < 200 && !link; i++) {
      // The test run's SMTP sink is shared by every stack of the run, and every stack seeds the same owner: only this
      // test's mail counts, told apart by this stack's gateway address in the link.
      const messages = (await (await fetch(`${stack.infra.smtp.inboxUrl}/messages`)).json()) as Array<{ to: string[]; subject: string; text: string; receivedAt: string }>;
      const ours = new RegExp(`(${stack.gatewayUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/sign#token=sgls_[A-Za-z0-9]+)`);
      const links = messages.filter((m) => m.to.includes(owner) && m.subject.includes('Consulting agreement') && m.receivedAt >= since).map((m) => ours.exec(m.text)?.[1]);
      // The newest link: other e-mails (a completion, say) carry none.
      link = links.filter(Boolean).at(-1);
      if (!link) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(link?.startsWith(`${stack.gatewayUrl}/sign#token=`)).toBe(true);
    const token = link!.split('#token=')[1];
    expect((await call(stack.gatewayUrl, 'POST', '/v1/signing/exchange', { body: { token } })).status).toBe(200);
    expect((await call(stack.gatewayUrl, 'POST', '/v1/signing/exchange', { body: { token } })).status).toBe(401);
  });

  it('seals the completed envelope: version=sealed and version=certificate are PAdES PDFs that pdfsig reports valid', async () => {
    const envelope = (await call(stack.gatewayUrl, 'GET', '/v1/envelopes?q=crm-1001', { headers: auth })).body.data[0];
    let seal = '';
    for (let i = 0; i < 300 && seal !== 'sealed'; i++) {
      seal = (await call(stack.gatewayUrl, 'GET', `/v1/envelopes/${envelope.id}`, { headers: auth })).body.seal;
      if (seal !== 'sealed') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(seal).toBe('sealed');
    const sealed = await fetch(`${stack.gatewayUrl}/v1/envelopes/${envelope.id}/document?version=sealed`, { headers: auth });
    expect(sealed.status).toBe(200);
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'sealed-')), 'sealed.pdf');
    await writeFile(file, Buffer.from(await sealed.arrayBuffer()));
    const report = spawnSync('pdfsig', [file], { encoding: 'utf8' }).stdout;
    expect(report).toContain('Signature Type: ETSI.CAdES.detached');
    expect(report).toContain('Signature Validation: Signature is Valid.');
    // The stack runs a local RFC 3161 authority: the signature carries a timeStampToken attribute (PAdES B-T).
    const contents = [...(await readFile(file)).toString('latin1').matchAll(/\/Contents\s*<([0-9A-Fa-f]+)>/g)].at(-1)![1]!.toLowerCase();
    expect(contents).toContain('060b2a864886f70d010910020e');
    const certificate = await fetch(`${stack.gatewayUrl}/v1/envelopes/${envelope.id}/document?version=certificate`, { headers: auth });
    expect(certificate.status).toBe(200);
    const certificateFile = path.join(path.dirname(file), 'certificate.pdf');
    await writeFile(certificateFile, Buffer.from(await certificate.arrayBuffer()));
    expect(spawnSync('pdfsig', [certificateFile], { encoding: 'utf8' }).stdout).toContain('Signature Validation: Signature is Valid.');
    expect(spawnSync('pdftotext', [certificateFile, '-'], { encoding: 'utf8' }).stdout).toContain('Certificate of completion');
  }, 60_000);

  it('lets anyone verify the sealed document without an account: sigil-verify checks the proof and the signed checkpoint', async () => {
    const envelope = (await call(stack.gatewayUrl, 'GET', '/v1/envelopes?q=crm-1001', { headers: auth })).body.data[0];
    const dir = await mkdtemp(path.join(tmpdir(), 'verify-'));
    const file = path.join(dir, 'sealed.pdf');
    await writeFile(file, Buffer.from(await (await fetch(`${stack.gatewayUrl}/v1/envelopes/${envelope.id}/document?version=sealed`, { headers: auth })).arrayBuffer()));
    const sha256 = createHash('sha256').update(await readFile(file)).digest('hex');
    let result: Reply | undefined;
    for (let i = 0; i < 200; i++) {
      result = await call(stack.gatewayUrl, 'POST', '/v1/public/verify', { body: { sha256 } });
      if (result.status === 200 && result.body.pending === false) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(result!.status, JSON.stringify(result!.body)).toBe(200);
    expect(result!.body).toMatchObject({ envelope: { id: envelope.id, status: 'completed', testMode: true }, document: 'sealed', mode: 'test', pending: false });
    expect(result!.headers.get('ratelimit-limit')).toBe('60');
    const keys = await call(stack.gatewayUrl, 'GET', '/.well-known/sigil/keys.json');
    expect(keys.body.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', notAfter: null });
    const cli = path.resolve(import.meta.dirname, '../../node_modules/.bin/sigil-verify');
    const verified = spawnSync(process.execPath, [cli, file, '--url', stack.gatewayUrl], { encoding: 'utf8' });
    expect(verified.status, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/TEST MODE/);
    expect(verified.stdout.trim().split('\n').at(-1)).toBe('VERIFIED');
    await writeFile(file, Buffer.concat([await readFile(file), Buffer.from('%')]));
    const tampered = spawnSync(process.execPath, [cli, file, '--url', stack.gatewayUrl], { encoding: 'utf8' });
    expect(tampered.status).toBe(1);
    expect(tampered.stdout).toMatch(/NOT VERIFIED/);
  }, 60_000);

  it('keeps the envelope\'s audit trail as a valid hash chain, from creation to completion, checkable offline', async () => {
    const envelope = (await call(stack.gatewayUrl, 'GET', '/v1/envelopes?q=crm-1001', { headers: auth })).body.data[0];
    let trail: { data: Array<{ seq: number; type: string }>; chain: { valid: boolean; length: number } } | undefined;
    for (let i = 0; i < 200; i++) {
      trail = (await call(stack.gatewayUrl, 'GET', `/v1/envelopes/${envelope.id}/events?limit=100`, { headers: auth })).body;
      if (trail?.data?.some((e) => e.type === 'envelope.sealed')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // E-mails (suppressed here: test mode, addresses outside the organization) interleave as the mail consumer runs.
    expect(trail!.data.map((e) => e.type).filter((type) => !type.startsWith('email.'))).toEqual([
      'envelope.created', 'envelope.ready', 'recipient.sent', 'recipient.viewed', 'recipient.signed', 'recipient.sent', 'recipient.viewed', 'recipient.signed', 'envelope.completed', 'envelope.sealed',
    ]);
    expect(trail!.data.some((e) => e.type === 'email.suppressed')).toBe(true);
    expect(trail!.chain).toMatchObject({ valid: true, length: trail!.data.length });
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'trail-')), 'trail.json');
    await writeFile(file, JSON.stringify(trail));
    const verified = spawnSync(process.execPath, [path.resolve(import.meta.dirname, '../../scripts/verify-audit-chain.ts'), file], { encoding: 'utf8' });
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(new RegExp(`^valid: ${trail!.data.length} entries`));
  }, 60_000);

  it('streams the trail through the gateway as server-sent events, resuming after Last-Event-ID', async () => {
    const envelope = (await call(stack.gatewayUrl, 'GET', '/v1/envelopes?q=crm-1001', { headers: auth })).body.data[0];
    const controller = new AbortController();
    const res = await fetch(`${stack.gatewayUrl}/v1/envelopes/${envelope.id}/events/stream`, { headers: { ...auth, accept: 'text/event-stream', 'last-event-id': '7' }, signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    while (!/^event: ?envelope\.completed$/m.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const ids = [...text.matchAll(/^id: ?(\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids[0]).toBe(8);
    expect(ids).toEqual(ids.map((_, i) => 8 + i));
  });

  it('shows envelopes with their template (templates subgraph), trail and seal (evidence subgraph), through the gateway\'s GraphQL', async () => {
    const res = await call(stack.gatewayUrl, 'POST', '/graphql', {
      headers: auth,
      body: { query: '{ envelopes(first: 10, q: "crm-1001") { nodes { id status seal recipients { role status } template { id name latestVersion } events(first: 1) { entries { seq type } chain { valid } } sealing { status leaves { document mode } } } } anchors(mode: "test", first: 1) { nodes { mode } } }' },
    });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.envelopes.nodes).toEqual([
      {
        id: expect.stringMatching(/^env_/), status: 'completed', seal: 'sealed', recipients: [{ role: 'client', status: 'completed' }, { role: 'consultant', status: 'completed' }], template: { id: templateId, name: 'Consulting agreement', latestVersion: 1 },
        // The evidence subgraph adds the audit trail and the seal's leaves in the transparency log.
        events: { entries: [{ seq: 1, type: 'envelope.created' }], chain: { valid: true } },
        sealing: { status: 'sealed', leaves: [{ document: 'sealed', mode: 'test' }, { document: 'certificate', mode: 'test' }] },
      },
    ]);
    expect(res.body.data.anchors.nodes).toEqual([{ mode: 'test' }]);
  });

  it('voids another envelope in progress, and lists it with its status', async () => {
    const created = await call(stack.gatewayUrl, 'POST', '/v1/envelopes', {
      headers: auth,
      body: { template: templateId, externalId: 'crm-1002', recipients: [{ role: 'client', name: 'Ada', email: 'ada@example.com' }, { role: 'consultant', name: 'Grace', email: 'grace@example.com' }], variables: { company: 'X' } },
    });
    const id = created.body.id;
    const voided = await call(stack.gatewayUrl, 'POST', `/v1/envelopes/${id}/void`, { headers: auth, body: { reason: 'Superseded' } });
    expect(voided.status).toBe(200);
    expect((await call(stack.gatewayUrl, 'GET', '/v1/envelopes?status=voided', { headers: auth })).body.data.map((e: { id: string }) => e.id)).toEqual([id]);
  });

  it('delivered every envelope event to the local receiver, each verified with the official standardwebhooks library', async () => {
    const expected = ['envelope.created', 'envelope.ready', 'recipient.sent', 'recipient.viewed', 'recipient.signed', 'envelope.completed', 'envelope.sealed', 'envelope.voided'];
    const types = () => new Set(hooks.map((h) => (JSON.parse(h.body) as { type: string }).type));
    await until(async () => types(), (seen) => expected.every((t) => seen.has(t)), 30_000);
    const verifier = new Webhook(webhookSecret);
    for (const hook of hooks) {
      const payload = verifier.verify(hook.body, hook.headers) as { id: string; type: string; testMode: boolean; data: { envelope: { id: string } } };
      expect(hook.headers['webhook-id']).toBe(payload.id);
      expect(hook.headers['user-agent']).toBe('Sigil-Webhooks/1');
      expect(payload.testMode).toBe(true);
      expect(payload.data.envelope.id).toMatch(/^env_/);
    }
    const completed = hooks.map((h) => JSON.parse(h.body)).find((p) => p.type === 'envelope.completed');
    expect(completed.data.values).toBeDefined();
  });
});
