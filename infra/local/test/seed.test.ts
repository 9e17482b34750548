import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seedFirstOrganization } from '../src/stack.ts';

/** The first organization of a local stack, against a gateway that knows only the owners signed up to it. */
let server: http.Server;
let url: string;
let owners: Map<string, string>;
let calls: string[];

beforeEach(async () => {
  owners = new Map();
  calls = [];
  server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      calls.push(`${req.method} ${req.url}`);
      const body = text ? (JSON.parse(text) as { email?: string; password?: string }) : {};
      const answer = (status: number, value: object, cookie = false) => {
        res.writeHead(status, { 'content-type': 'application/json', ...(cookie ? { 'set-cookie': 'sigil_session=s1; Path=/' } : {}) });
        res.end(JSON.stringify(value));
      };
      if (req.url === '/v1/auth/sign-in') return owners.get(body.email ?? '') === body.password ? answer(200, { organization: { id: 'org_1' } }, true) : answer(401, { title: 'Unauthorized' });
      if (req.url === '/v1/auth/sign-up') {
        if (owners.has(body.email ?? '')) return answer(409, { title: 'Conflict' });
        owners.set(body.email ?? '', body.password ?? '');
        return answer(201, { organization: { id: 'org_1' } }, true);
      }
      if (req.url === '/v1/api-keys') return answer(req.headers.cookie === 'sigil_session=s1' ? 201 : 401, { secret: `sk_test_${calls.length}` });
      if (req.url?.startsWith('/v1/templates')) return answer(req.headers.authorization === 'Bearer sk_test_live' ? 200 : 401, {});
      answer(404, {});
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('seeding the first organization', () => {
  it('signs the saved owner up again when the accounts database no longer knows it (dropped, or another server)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seed-'));
    const saved = { organizationId: 'org_old', ownerEmail: 'owner@sigil.local', ownerPassword: 'local-saved', testApiKey: 'sk_test_gone' };
    await writeFile(path.join(dir, 'seed.json'), JSON.stringify(saved));
    const lines: string[] = [];
    const seed = await seedFirstOrganization(dir, url, (line) => lines.push(line));
    expect(calls).toEqual(['POST /v1/auth/sign-in', 'POST /v1/auth/sign-up', 'POST /v1/api-keys']);
    expect(owners.get('owner@sigil.local')).toBe('local-saved');
    expect(seed).toMatchObject({ organizationId: 'org_1', ownerEmail: 'owner@sigil.local', ownerPassword: 'local-saved', testApiKey: 'sk_test_3' });
    expect(JSON.parse(await readFile(path.join(dir, 'seed.json'), 'utf8'))).toEqual(seed);
    expect(lines).toEqual([expect.stringContaining("is not in this stack's accounts database; seeding it again")]);
  });

  it('keeps a saved owner and key that still work, and replaces only a key that stopped working', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seed-'));
    owners.set('owner@sigil.local', 'local-saved');
    const saved = { organizationId: 'org_1', ownerEmail: 'owner@sigil.local', ownerPassword: 'local-saved', testApiKey: 'sk_test_live' };
    await writeFile(path.join(dir, 'seed.json'), JSON.stringify(saved));
    expect(await seedFirstOrganization(dir, url, () => undefined)).toEqual(saved);
    expect(calls).toEqual(['POST /v1/auth/sign-in', 'GET /v1/templates?limit=1']);

    await writeFile(path.join(dir, 'seed.json'), JSON.stringify({ ...saved, testApiKey: 'sk_test_revoked' }));
    calls = [];
    const seed = await seedFirstOrganization(dir, url, () => undefined);
    expect(calls).toEqual(['POST /v1/auth/sign-in', 'GET /v1/templates?limit=1', 'POST /v1/api-keys']);
    expect(seed.testApiKey).toBe('sk_test_3');
  });

  it('stops with a clear error when the saved owner is refused for another reason', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'seed-'));
    await writeFile(path.join(dir, 'seed.json'), JSON.stringify({ organizationId: 'o', ownerEmail: 'x@y', ownerPassword: 'p', testApiKey: 'k' }));
    server.removeAllListeners('request');
    server.on('request', (_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json' });
      res.end('{}');
    });
    await expect(seedFirstOrganization(dir, url, () => undefined)).rejects.toThrow(/Seeded owner can no longer sign in \(429\); delete .*seed\.json/);
  });
});
