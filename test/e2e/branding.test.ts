// E-mail branding end to end on the local stack, through the gateway: an owner pays for Team, saves a display name, a
// message and a footer, uploads a logo (served publicly, inert and cached for good), and the signing request envelopes
// e-mails to a recipient carries all of it, read from accounts by envelopes over the internal endpoint.
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upgradeToTeam } from './checkout.ts';
import { bearer, call, createKey, publishOneRoleTemplate, signUp, startTestStack, until, type TestStack } from './stack.ts';

let stack: TestStack;
let base: string;
let cookie: string;
let organizationId: string;

beforeAll(async () => {
  stack = await startTestStack();
  base = stack.gatewayUrl;
  ({ cookie, organizationId } = await signUp(base, `branding-${Date.now()}@example.com`, 'Acme Corp'));
  await upgradeToTeam(base, cookie);
}, 240_000);
afterAll(async () => stack?.stop(), 60_000);

/** A 1x1 PNG (its CRCs left zero: the type is read from the signature, and no decoder runs on the way). */
function tinyPng(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    return Buffer.concat([length, Buffer.from(type, 'ascii'), data, Buffer.alloc(4)]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(1, 4);
  header.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.from([0, 36, 80, 211, 255]))), chunk('IEND', Buffer.alloc(0))]);
}

describe('e-mail branding on the stack', () => {
  let logoUrl = '';

  it('saves the branding and the logo, and serves the logo publicly with headers that keep it inert', async () => {
    const saved = await call(base, 'PUT', '/v1/organization/email-branding', { headers: { cookie }, body: { displayName: 'Acme Legal', customMessage: 'Please sign before Friday.', footer: 'Acme Corp · 1 Main St' } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.allowed).toEqual({ custom: true, footer: true, removePoweredBy: false });

    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(tinyPng())], { type: 'image/png' }), 'logo.png');
    const uploaded = await fetch(`${base}/v1/organization/logo`, { method: 'POST', headers: { cookie }, body: form });
    const body = (await uploaded.json()) as { url: string };
    expect(uploaded.status, JSON.stringify(body)).toBe(201);
    logoUrl = body.url;
    expect(logoUrl).toMatch(new RegExp(`^${base}/v1/public/logos/${organizationId}/[0-9a-f]{32}\\.png$`));

    const served = await fetch(logoUrl);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(served.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(await served.arrayBuffer()).equals(tinyPng())).toBe(true);
  });

  it("puts the display name, logo, message and footer into the signing request a recipient gets", async () => {
    const key = await createKey(base, cookie, { name: 'branding e2e', mode: 'live' });
    const headers = bearer(key.secret);
    const templateId = await publishOneRoleTemplate(base, headers, 'Branded agreement', 'client');
    const recipient = `ada-${Date.now()}@example.com`;
    const created = await call(base, 'POST', '/v1/envelopes', { headers, body: { template: templateId, recipients: [{ role: 'client', name: 'Ada Lovelace', email: recipient }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    type InboxMessage = { id: string; to: string[]; subject: string; text: string; html: string | null };
    const [message] = await until(
      async () => (await (await fetch(`${stack.infra.smtp.inboxUrl}/messages?to=${encodeURIComponent(recipient)}`)).json()) as InboxMessage[],
      (messages) => messages.length > 0,
    );
    expect(message?.subject).toBe('Acme Legal asks you to sign “Branded agreement”');
    expect(message?.text).toContain('> Please sign before Friday.');
    expect(message?.text).toContain('Acme Corp · 1 Main St');
    expect(message?.text).toContain('Powered by Sigil.');
    expect(message?.html).toContain(`<img src="${logoUrl}" alt="Acme Legal"`);
    const raw = await (await fetch(`${stack.infra.smtp.inboxUrl}/messages/${message?.id}/raw`)).text();
    expect(raw).toMatch(/^From: "?Acme Legal"? <[^>]+>\r?$/m);
  });
});
