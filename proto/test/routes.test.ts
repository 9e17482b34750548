import { describe, expect, it } from 'vitest';
import { SERVICE_NAMES, acceptInvitationUrl, SIGIL, STRATA, STRATA_SERVICE_NAMES, isStrataService, matchRoute, resolveService, routeTable } from '../src/index.ts';
import { listStrataOperations } from '../src/strata-openapi.ts';

describe('route table', () => {
  it.each([
    ['/v1/templates', 'templates'],
    ['/scim/v2/Users', 'accounts'],
    ['/scim/v2/Groups/scimg_0123456789', 'accounts'],
    ['/v1/templates/tpl_0123456789/versions/latest/document', 'templates'],
    ['/v1/envelopes', 'envelopes'],
    ['/v1/envelopes/env_0123456789', 'envelopes'],
    ['/v1/envelopes/env_0123456789/events', 'evidence'],
    ['/v1/envelopes/env_0123456789/events/stream', 'evidence'],
    ['/v1/envelopes/env_0123456789/sessions', 'envelopes'],
    ['/v1/signing-links', 'envelopes'],
    ['/v1/signing-links/lnk_0123456789', 'envelopes'],
    ['/v1/signing/exchange', 'signing'],
    ['/v1/links/lnk_0123456789/start', 'signing'],
    ['/v1/viewer/stream', 'signing'],
    ['/v1/webhook-endpoints/we_0123456789/secret/rotate', 'webhooks'],
    ['/v1/events/evt_0123456789/redeliver', 'webhooks'],
    ['/v1/auth/sign-in', 'accounts'],
    ['/v1/api-keys', 'accounts'],
    ['/v1/api-keys/key_0123456789', 'accounts'],
    ['/v1/organization/members/mem_0123456789', 'accounts'],
    ['/v1/public/logos/org_0123456789/logo.png', 'accounts'],
    ['/v1/sso/discover', 'accounts'],
    ['/v1/scim', 'accounts'],
    ['/v1/scim/v2/Users', 'accounts'],
    ['/v1/billing', 'billing'],
    ['/v1/billing/webhooks/processor', 'billing'],
    ['/v1/usage', 'billing'],
    ['/v1/public/anchors', 'evidence'],
    ['/v1/public/anchors/latest', 'evidence'],
    ['/v1/public/verify', 'evidence'],
    [SIGIL.keysPath, 'evidence'],
    ['/v1/openapi.json', 'gateway'],
    ['/v1/templates?limit=5', 'templates'],
    ['/v1/templates/', 'templates'],
    ['/api/v1', 'backup-catalog'],
    ['/api/v1/whoami', 'backup-catalog'],
    ['/api/v1/targets/prod/orders/backup-now', 'backup-catalog'],
    ['/api/v1/events', 'backup-catalog'],
    ['/api/v1/sandboxesx', 'backup-catalog'],
    ['/api/v1/sandboxes', 'sandbox'],
    ['/api/v1/sandboxes/sbx-1/query?x=1', 'sandbox'],
    ['/api/v1/sandboxes/sbx-1/tables/public.orders', 'sandbox'],
  ] as const)('%s -> %s', (path, service) => {
    expect(resolveService(path)).toBe(service);
  });

  it.each([
    '/',
    '/healthz',
    '/v1',
    '/v1/unknown',
    '/v1/templates-old',
    '/v1/signingx',
    '/v1/events',
    '/v1/events/evt_1',
    '/v1/events/evt_1/redeliver/more',
    '/v1/usage/2025-01',
    '/v1/public',
    '/v1/public/verify/x',
    '/.well-known/sigil',
    '/v1/templates/../api-keys',
    '/v1/templates/%2e%2e/api-keys',
    '/v1/templates/a%2Fb',
    '/v1/templates/%E0%A4%A',
    '/api',
    '/api/v2/whoami',
    '/api/dev/token',
    '/api/v1/sandboxes/../targets',
    '/api/v1/%2e%2e/v1/openapi.json',
  ])('%s is not routed', (path) => {
    expect(resolveService(path)).toBeUndefined();
  });

  it('only names known services', () => {
    for (const route of routeTable) expect(SERVICE_NAMES).toContain(route.service);
  });

  it('names the Strata services', () => {
    expect(STRATA_SERVICE_NAMES).toEqual(['backup-catalog', 'sandbox']);
    for (const name of STRATA_SERVICE_NAMES) expect(SERVICE_NAMES).toContain(name);
    expect(isStrataService('sandbox')).toBe(true);
    expect(isStrataService('templates')).toBe(false);
  });

  it('sends every operation of strata.v1.yaml to the service its x-strata-service names', () => {
    const ops = listStrataOperations();
    expect(ops.length).toBeGreaterThan(0);
    for (const op of ops) {
      const path = STRATA.apiPrefix + op.path.replace(/\{[^}]+\}/g, 'x-1');
      expect(resolveService(path), `${op.method} ${path}`).toBe(op.service);
    }
  });

  it('is ordered most specific first: no route is shadowed by an earlier one', () => {
    // A concrete path for each pattern must resolve to that pattern's own service.
    for (const route of routeTable) {
      const concrete = route.pattern.replace(/\{[^}]+\}/g, 'x_0123456789').replace(/\/\*\*$/, '');
      expect(resolveService(concrete), route.pattern).toBe(route.service);
      expect(resolveService(`${concrete}/deeper`), route.pattern).toBe(route.pattern.endsWith('/**') ? route.service : undefined);
    }
  });

  it('matchRoute implements the segment syntax', () => {
    expect(matchRoute('/v1/events/{id}/redeliver', '/v1/events/evt_1/redeliver')).toBe(true);
    expect(matchRoute('/v1/events/{id}/redeliver', '/v1/events//redeliver')).toBe(false);
    expect(matchRoute('/v1/templates/**', '/v1/templates')).toBe(true);
    expect(matchRoute('/v1/templates/**', '/v1/templates/a/b/c')).toBe(true);
    expect(matchRoute('/v1/templates/**', '/v1/templatesx')).toBe(false);
  });

  it('links an invitation to the dashboard\'s accept page under the public URL, the token encoded', () => {
    expect(acceptInvitationUrl('https://sigil.example.com', 'a+b/c')).toBe('https://sigil.example.com/app/accept-invitation?token=a%2Bb%2Fc');
    expect(acceptInvitationUrl('https://example.com/sigil/', 'tok_1')).toBe('https://example.com/sigil/app/accept-invitation?token=tok_1');
  });
});
