// The organization logo: accepted by its bytes (PNG, JPEG, WebP, SVG), refused otherwise (415) or beyond 512 KB (413),
// an SVG sanitised before it is stored, served publicly with headers that keep it inert, and set as the branding's.
import { deflateSync } from 'node:zlib';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandingPath } from '@sigil/proto/internal-branding';
import { signUp, type SignedUp } from './helpers.ts';
import { createBrandingHarness, PUBLIC_URL, type BrandingHarness } from './branding-harness.ts';

let h: BrandingHarness;
beforeAll(async () => {
  h = await createBrandingHarness('branding_logo');
});
afterAll(async () => h?.close());

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes: Buffer) => {
  let c = 0xffffffff;
  for (const byte of bytes) c = (CRC_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}
/** A valid 1x1 RGBA PNG of one colour. */
function png(rgba: [number, number, number, number]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(1, 4);
  header.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.from([0, ...rgba]))), chunk('IEND', Buffer.alloc(0))]);
}
/** A 1x1 JPEG and a 1x1 lossless WebP. */
const JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);
const WEBP = Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');

const upload = (owner: SignedUp, bytes: Buffer, filename: string, contentType = 'application/octet-stream') =>
  request(h.app).post('/v1/organization/logo').set(owner.headers).attach('file', bytes, { filename, contentType });

async function teamOwner(): Promise<SignedUp> {
  const owner = await signUp(h);
  h.plans.set(owner.organizationId, 'team');
  return owner;
}

/** The path of a logo URL, as the gateway would forward it. */
const pathOf = (url: string) => new URL(url).pathname;

describe('logo upload', () => {
  it('takes PNG, JPEG and WebP by their bytes (whatever the name says), stores them under their hash, and makes the last one the branding’s', async () => {
    const owner = await teamOwner();
    const cases: Array<[Buffer, string, string]> = [
      [png([36, 80, 211, 255]), 'logo.bin', 'image/png'],
      [JPEG, 'logo.png', 'image/jpeg'],
      [WEBP, 'logo', 'image/webp'],
    ];
    let last = '';
    for (const [bytes, filename, type] of cases) {
      const res = await upload(owner, bytes, filename);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.object).toBe('logo');
      expect(res.body.url).toMatch(new RegExp(`^${PUBLIC_URL}/v1/public/logos/${owner.organizationId}/[0-9a-f]{32}\\.(png|jpg|webp)$`));
      const served = await request(h.app).get(pathOf(res.body.url)).buffer(true).parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      });
      expect(served.status).toBe(200);
      expect(served.headers['content-type']).toBe(type);
      expect(Buffer.compare(served.body as Buffer, bytes)).toBe(0);
      last = res.body.url;
    }
    // The same bytes again: the same immutable name.
    expect((await upload(owner, WEBP, 'again.webp')).body.url).toBe(last);
    const branding = await request(h.app).get('/v1/organization/email-branding').set(owner.headers);
    expect(branding.body.logoUrl).toBe(last);
    expect(h.notified.filter((o) => o === owner.organizationId).length).toBeGreaterThanOrEqual(3);
    const internal = await request(h.app).get(brandingPath(owner.organizationId)).set(await h.auth.headers({ kind: 'service', organizationId: owner.organizationId, actorId: 'envelopes', mode: 'live', permissions: [] }));
    expect(internal.body.logoUrl).toBe(last);
    // Removing the logo from the branding leaves earlier URLs working (e-mails already sent show them).
    expect((await request(h.app).put('/v1/organization/email-branding').set(owner.headers).send({ logoUrl: null })).body.logoUrl).toBeNull();
    expect((await request(h.app).get(pathOf(last))).status).toBe(200);
  });

  it('refuses text named .png (415), anything else (415), more than 512 KB (413), and a missing file (400)', async () => {
    const owner = await teamOwner();
    const text = await upload(owner, Buffer.from('definitely not an image\n'), 'logo.png', 'image/png');
    expect(text.status).toBe(415);
    expect(text.body.detail).toMatch(/PNG, JPEG, WebP or SVG/);
    expect(text.body.errors).toEqual([{ pointer: '/body/file', detail: 'must be a PNG, JPEG, WebP or SVG image' }]);
    const gif = await upload(owner, Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'), 'logo.gif', 'image/gif');
    expect(gif.status).toBe(415);
    expect(gif.body.detail).toContain('image/gif');
    const html = await upload(owner, Buffer.from('<html><body><svg></svg></body></html>'), 'logo.svg', 'image/svg+xml');
    expect(html.status).toBe(415);

    const big = Buffer.concat([png([0, 0, 0, 255]), Buffer.alloc(512 * 1024)]);
    const tooBig = await upload(owner, big, 'big.png', 'image/png');
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.detail).toContain('524288 bytes');
    const missing = await request(h.app).post('/v1/organization/logo').set(owner.headers).field('other', 'x');
    expect(missing.status).toBe(400);
    expect(missing.body.errors?.[0]?.pointer).toBe('/body/file');
  });

  it('needs the plan’s branding (403) and a dashboard session (401 for an API key)', async () => {
    const owner = await signUp(h);
    const refused = await upload(owner, png([1, 2, 3, 255]), 'logo.png');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ feature: 'branding', detail: expect.stringContaining('Free plan') });
    const key = await h.auth.headers({ kind: 'api_key', organizationId: owner.organizationId, actorId: 'key_1', mode: 'live', permissions: ['org:manage'] } as never);
    expect((await request(h.app).post('/v1/organization/logo').set(key).attach('file', png([1, 2, 3, 255]), 'logo.png')).status).toBe(401);
  });
});

describe('SVG logos', () => {
  const HOSTILE = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 40 40" onload="alert('onload')">
  <script>alert('script')</script>
  <defs><linearGradient id="g"><stop offset="0" stop-color="#2450d3"/></linearGradient></defs>
  <rect id="box" width="40" height="40" fill="url(#g)" onclick="alert('click')" style="fill:url(https://evil.example/a.svg#x)"/>
  <a xlink:href="javascript:alert('link')"><text x="2" y="20">Acme</text></a>
  <image href="https://evil.example/track.png" width="10" height="10"/>
  <use xlink:href="https://evil.example/sprite.svg#icon"/>
  <use href="#box"/>
  <foreignObject width="10" height="10"><div xmlns="http://www.w3.org/1999/xhtml">html</div></foreignObject>
  <style>@import url(https://evil.example/x.css);</style>
  <style>.mark { background: image-set("https://evil.example/set.png" 1x); }</style>
  <rect width="4" height="4" style="background-image: image-set('https://evil.example/attr.png' 1x)"/>
  <set attributeName="href" to="javascript:alert('set')"/>
  <style>.ok { fill: #2450d3; }</style>
  <circle cx="20" cy="20" r="5" fill="#fff"/>
</svg>`;

  it('recognises an SVG by parsing it and serves it without script, handlers or external references', async () => {
    const owner = await teamOwner();
    const res = await upload(owner, Buffer.from(HOSTILE), 'logo.txt', 'text/plain');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.url).toMatch(/\.svg$/);
    const served = await request(h.app).get(pathOf(res.body.url));
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/svg+xml');
    const svg = Buffer.isBuffer(served.body) ? served.body.toString('utf8') : String(served.text);
    for (const gone of ['<script', 'alert(', 'onload', 'onclick', 'javascript:', 'evil.example', 'foreignObject', '@import', 'image-set', '<set']) expect(svg, gone).not.toContain(gone);
    // What a logo needs stays: shapes, text, local gradients and references.
    expect(svg).toContain('<circle');
    expect(svg).toContain('.ok { fill: #2450d3; }');
    expect(svg).toContain('fill="url(#g)"');
    expect(svg).toContain('<text x="2" y="20">Acme</text>');
    expect(svg).toMatch(/<use href="#box"\s*\/>/);
  });

  it('refuses an SVG with entity declarations, and XML that is not an SVG', async () => {
    const owner = await teamOwner();
    const bomb = `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><svg xmlns="http://www.w3.org/2000/svg"><text>&b;</text></svg>`;
    expect((await upload(owner, Buffer.from(bomb), 'bomb.svg')).status).toBe(415);
    expect((await upload(owner, Buffer.from('<?xml version="1.0"?><svg><rect/></svg>'), 'no-namespace.svg')).status).toBe(415);
    expect((await upload(owner, Buffer.from('<?xml version="1.0"?><note><svg xmlns="http://www.w3.org/2000/svg"/></note>'), 'note.svg')).status).toBe(415);
  });
});

describe('the public logo', () => {
  it('is served with nosniff, a CSP that keeps it inert, long immutable caching and open cross-origin use; unknown ones are 404', async () => {
    const owner = await teamOwner();
    const res = await upload(owner, png([9, 9, 9, 255]), 'logo.png');
    const served = await request(h.app).get(pathOf(res.body.url));
    expect(served.status).toBe(200);
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    expect(served.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(served.headers['cross-origin-resource-policy']).toBe('cross-origin');

    const file = pathOf(res.body.url).split('/').pop() as string;
    expect((await request(h.app).get(`/v1/public/logos/${owner.organizationId}/0123456789abcdef0123456789abcdef.png`)).status).toBe(404);
    const other = await signUp(h);
    // Another organization's path to the same file name is not it.
    expect((await request(h.app).get(`/v1/public/logos/${other.organizationId}/${file}`)).status).toBe(404);
    expect((await request(h.app).get(`/v1/public/logos/${owner.organizationId}/..%2F..%2Fsecret`)).status).toBe(400);
  });
});
