import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument } from 'pdf-lib';
import { call, startTestStack, until, type TestStack } from './stack.ts';

/**
 * Viewers through the gateway, on the seeded organization (Free: one viewer per envelope, no document access): an
 * envelope with a viewer, the plan's refusals, the viewer's e-mail from the stack's inbox, the exchange, the status, the
 * live stream that wakes when the signer signs, and the revocation that closes it.
 */
let stack: TestStack;
let auth: Record<string, string>;

beforeAll(async () => {
  stack = await startTestStack();
  auth = { authorization: `Bearer ${stack.seed.testApiKey}` };
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

async function onePagePdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([612, 792]);
  return Buffer.from(await doc.save());
}

/** The newest viewer link e-mailed to an address since a moment (the run's SMTP sink is shared by every stack). */
async function viewerLink(address: string, since: string): Promise<string> {
  const links = await until(
    async () => {
      const messages = (await (await fetch(`${stack.infra.smtp.inboxUrl}/messages`)).json()) as Array<{ to: string[]; text: string; receivedAt: string }>;
      // The sink is shared by every stack of the run, which all seed the same owner: this stack's links only.
      const ours = new RegExp(`(${stack.gatewayUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/view#token=sglv_[A-Za-z0-9]{40})`);
      return messages.filter((m) => m.to.includes(address) && m.receivedAt >= since).map((m) => ours.exec(m.text)?.[1]).filter(Boolean);
    },
    (found) => found.length > 0,
  );
  return links.at(-1) as string;
}

/** A server-sent event stream read as text as it arrives. */
async function openStream(url: string) {
  const res = await fetch(url);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const state = { text: '', ended: false };
  const pump = (async () => {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return void (state.ended = true);
      state.text += decoder.decode(chunk.value);
    }
  })().catch(() => void (state.ended = true));
  return { res, state, close: async () => void (await reader.cancel().catch(() => undefined), await pump) };
}

describe('a viewer follows an envelope through the gateway', () => {
  let templateId: string;

  it('publishes a one-role template', async () => {
    templateId = (await call(stack.gatewayUrl, 'POST', '/v1/templates', { body: { name: 'Board approval' }, headers: auth })).body.id;
    const upload = await fetch(`${stack.gatewayUrl}/v1/templates/${templateId}/files`, { method: 'POST', headers: { ...auth, 'content-type': 'application/pdf' }, body: await onePagePdf() });
    expect(upload.status).toBe(201);
    const draft = await call(stack.gatewayUrl, 'PUT', `/v1/templates/${templateId}/draft`, {
      headers: auth,
      body: { file: ((await upload.json()) as { id: string }).id, roles: [{ name: 'director', order: 1 }], fields: [{ id: 'sig', role: 'director', type: 'signature', required: true, page: 1, x: 72, y: 600, width: 200, height: 40 }], variables: [] },
    });
    expect(draft.status, JSON.stringify(draft.body)).toBe(200);
    expect((await call(stack.gatewayUrl, 'POST', `/v1/templates/${templateId}/publish`, { headers: auth })).status).toBe(201);
  });

  it('refuses a second viewer and document access on Free, sends the viewer its link, and keeps its page live until revoked', async () => {
    const owner = stack.seed.ownerEmail;
    const recipients = [{ role: 'director', name: 'Dana Director', email: 'dana@example.com', delivery: 'embedded' }];
    const two = await call(stack.gatewayUrl, 'POST', '/v1/envelopes', { headers: auth, body: { template: templateId, recipients, viewers: [{ email: owner }, { email: 'second@example.com' }] } });
    expect(two.status).toBe(403);
    expect(two.body).toMatchObject({ type: expect.stringMatching(/plan-upgrade-required$/), feature: 'viewersPerEnvelope', detail: 'Your Free plan allows 1 viewer per envelope.', upgradeUrl: expect.any(String) });
    const withDocument = await call(stack.gatewayUrl, 'POST', '/v1/envelopes', { headers: auth, body: { template: templateId, recipients, viewers: [{ email: owner, documentAccess: true }] } });
    expect(withDocument.status).toBe(403);
    expect(withDocument.body).toMatchObject({ feature: 'viewerDocumentAccess' });

    const since = new Date().toISOString();
    const created = await call(stack.gatewayUrl, 'POST', '/v1/envelopes', { headers: auth, body: { template: templateId, recipients, viewers: [{ email: owner, name: 'The Owner' }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const envelopeId = created.body.id as string;
    const viewer = created.body.viewers[0] as { id: string; email: string };
    expect(viewer).toMatchObject({ object: 'viewer', email: owner, name: 'The Owner', documentAccess: false, revokedAt: null });
    const more = await call(stack.gatewayUrl, 'POST', `/v1/envelopes/${envelopeId}/viewers`, { headers: auth, body: { viewers: [{ email: 'second@example.com' }] } });
    expect(more.status).toBe(403);

    const link = await viewerLink(owner, since);
    expect(link.startsWith(`${stack.gatewayUrl}/view#token=sglv_`)).toBe(true);
    const exchanged = await call(stack.gatewayUrl, 'POST', '/v1/viewer/exchange', { body: { token: link.split('#token=')[1] } });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    const access = exchanged.body.accessToken as string;
    const bearer = { authorization: `Bearer ${access}` };

    const sent = await until(() => call(stack.gatewayUrl, 'GET', '/v1/viewer/envelope', { headers: bearer }), (r) => r.status === 200 && r.body.status === 'sent');
    expect(sent.body).toMatchObject({ object: 'viewer_envelope', id: envelopeId, title: 'Board approval', documentAvailable: false, recipients: [{ role: 'director', name: 'Dana Director', status: 'sent', signedAt: null }] });
    expect(JSON.stringify(sent.body)).not.toContain('@');
    expect((await fetch(`${stack.gatewayUrl}/v1/viewer/document`, { headers: bearer })).status).toBe(403);
    const opened = await until(() => call(stack.gatewayUrl, 'GET', `/v1/envelopes/${envelopeId}`, { headers: auth }), (r) => r.body.viewers[0].firstOpenedAt !== null);
    expect(opened.body.viewers[0].firstOpenedAt).toEqual(expect.any(String));

    const stream = await openStream(`${stack.gatewayUrl}/v1/viewer/stream?access_token=${access}`);
    expect(stream.res.status).toBe(200);
    expect(stream.res.headers.get('content-type')).toContain('text/event-stream');
    await until(async () => stream.state.text, (text) => text.startsWith('retry:'));
    const before = stream.state.text.length;

    const session = await call(stack.gatewayUrl, 'POST', `/v1/envelopes/${envelopeId}/sessions`, { headers: auth, body: { recipient: created.body.recipients[0].id } });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const signer = (await call(stack.gatewayUrl, 'POST', '/v1/signing/exchange', { body: { token: session.body.token } })).body.accessToken as string;
    const signed = await call(stack.gatewayUrl, 'POST', '/v1/signing/submit', { headers: { authorization: `Bearer ${signer}` }, body: { fields: { sig: { kind: 'typed', text: 'Dana Director' } }, consent: true } });
    expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    await until(async () => stream.state.text.slice(before), (text) => text.includes(`event: update\ndata: {"envelope":"${envelopeId}"}`));
    const completed = await call(stack.gatewayUrl, 'GET', '/v1/viewer/envelope', { headers: bearer });
    expect(completed.body).toMatchObject({ status: 'completed', recipients: [{ status: 'completed', signedAt: expect.any(String) }] });

    expect((await call(stack.gatewayUrl, 'DELETE', `/v1/envelopes/${envelopeId}/viewers/${viewer.id}`, { headers: auth })).status).toBe(204);
    await until(async () => stream.state.ended, (ended) => ended);
    await stream.close();
    expect((await call(stack.gatewayUrl, 'GET', '/v1/viewer/envelope', { headers: bearer })).status).toBe(401);
    expect((await call(stack.gatewayUrl, 'POST', '/v1/viewer/exchange', { body: { token: link.split('#token=')[1] } })).status).toBe(401);
    const trail = await until(() => call(stack.gatewayUrl, 'GET', `/v1/envelopes/${envelopeId}/events`, { headers: auth }), (r) => r.status === 200 && r.body.data.some((e: { type: string }) => e.type === 'viewer.revoked'));
    expect(trail.body.data.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['viewer.added', 'viewer.opened', 'viewer.revoked']));
  }, 120_000);
});
