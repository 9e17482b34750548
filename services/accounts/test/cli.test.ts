import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { freshTestDatabase, createTestAuth, silentLogger } from '@sigil/kit/testing';
import type { Express } from 'express';
import { createApp } from '../src/app.ts';
import { createDb, type Db } from '../src/db.ts';
import { authenticate, freshIp, migrationsDir, sha256, testEntitlements, type Harness } from './helpers.ts';

const run = promisify(execFile);
const script = path.resolve(import.meta.dirname, '../src/cli/create-owner.ts');

let url: string;
let db: Db;
let app: Express;
let h: Harness;
beforeAll(async () => {
  url = await freshTestDatabase('sigil_accounts_test_cli', migrationsDir);
  db = createDb(url);
  const auth = await createTestAuth();
  const { plans, entitlements } = await testEntitlements();
  app = (await createApp({ db, log: silentLogger(), verifyPrincipal: auth.verify, entitlements })).app;
  h = { app, db, databaseUrl: url, auth, plans, close: async () => undefined };
});
afterAll(async () => {
  await db?.$disconnect();
});

const createOwner = (args: string[]) => run(process.execPath, [script, ...args], { env: { ...process.env, DATABASE_URL: url } });

describe('create-owner command', () => {
  it('creates the organization and owner, generates a password and optionally a test key', async () => {
    const { stdout } = await createOwner(['--email', 'First@Example.com', '--name', 'First Owner', '--organization', 'Acme', '--api-key', 'test', '--json']);
    const out = JSON.parse(stdout) as { organizationId: string; userId: string; email: string; password: string; apiKey: string };
    expect(out.organizationId).toMatch(/^org_/);
    expect(out.email).toBe('first@example.com');
    expect(out.password.length).toBeGreaterThanOrEqual(20);
    expect(out.apiKey).toMatch(/^sgl_test_[A-Za-z0-9]{32}$/);

    const signIn = await request(app).post('/v1/auth/sign-in').set('x-forwarded-for', freshIp()).send({ email: out.email, password: out.password });
    expect(signIn.status).toBe(200);
    expect(signIn.body).toMatchObject({ role: 'owner', organization: { id: out.organizationId, name: 'Acme' } });
    const key = await authenticate(h, { type: 'api_key', secretHash: sha256(out.apiKey) });
    expect(key.principal).toMatchObject({ kind: 'api_key', organizationId: out.organizationId, mode: 'test' });
    expect(key.principal?.permissions).not.toContain('org:manage');
    const events = await db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM outbox_events WHERE payload->>'organizationId' = $1`, out.organizationId);
    expect(events[0]?.n).toBe(3); // organization.created, member.added, apikey.created
  });

  it('prints key=value lines, keeps a given password, and fails on a taken e-mail', async () => {
    const { stdout } = await createOwner(['--email', 'second@example.com', '--name', 'Second', '--organization', 'Beta', '--password', 'a long enough password']);
    expect(stdout).toMatch(/^organizationId=org_[A-Za-z0-9]+$/m);
    expect(stdout).not.toMatch(/^password=/m);
    await expect(createOwner(['--email', 'second@example.com', '--name', 'Again', '--organization', 'Gamma'])).rejects.toMatchObject({ code: 1 });
    await expect(createOwner(['--email', 'third@example.com'])).rejects.toMatchObject({ code: 2 });
  });

  it('names a missing DATABASE_URL and exits with 2', async () => {
    const { DATABASE_URL: _, ...env } = process.env;
    const args = [script, '--email', 'fourth@example.com', '--name', 'Fourth', '--organization', 'Delta'];
    await expect(run(process.execPath, args, { env })).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('DATABASE_URL') });
  });
});
