import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { STRATA_PRINCIPAL_HEADER } from '@sigil/kit/auth';
import { strataPrincipal } from '@sigil/kit/testing';
import { INTERNAL_CATALOG_PREFIX, sandboxRestorePath } from '@sigil/proto/internal-catalog';
import { startCatalogHarness, type CatalogHarness } from './helpers.ts';

/** The routes the sandbox service calls: only its service principal gets in, and answers carry the public API's statuses. */
let h: CatalogHarness;

beforeAll(async () => {
  h = await startCatalogHarness('internal_routes');
});

afterAll(async () => {
  await h?.close();
});

const sandboxService = strataPrincipal('restorer', { id: 'sandbox', email: '', service: true });

describe('internal sandbox-restore routes', () => {
  it('refuses a user principal, another service and a missing token', async () => {
    const body = { request: { target: 'default/nope' }, sandbox: { namespace: 'default', name: 'x' }, requestedBy: 'me' };
    for (const principal of [strataPrincipal('restorer-admin'), strataPrincipal('restorer', { id: 'mover', service: true })]) {
      const res = await request(h.app).post(INTERNAL_CATALOG_PREFIX).set(await h.auth.headers(principal)).send(body);
      expect(res.status).toBe(401);
    }
    expect((await request(h.app).post(INTERNAL_CATALOG_PREFIX).send(body)).status).toBe(401);
    expect((await request(h.app).post(INTERNAL_CATALOG_PREFIX).set(STRATA_PRINCIPAL_HEADER, 'not-a-token').send(body)).status).toBe(401);
  });

  it('answers the sandbox service with the public statuses', async () => {
    const headers = await h.auth.headers(sandboxService);
    const missing = await request(h.app).post(INTERNAL_CATALOG_PREFIX).set(headers).send({ request: { target: 'default/nope' }, sandbox: { namespace: 'default', name: 'x' }, requestedBy: 'me' });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatch(/Target default\/nope was not found/);
    const start = await request(h.app).post(sandboxRestorePath('default', 'none', 'start')).set(headers).send({ host: '127.0.0.1', port: 1, username: 'u', password: 'p' });
    expect(start.status).toBe(404);
  });
});
