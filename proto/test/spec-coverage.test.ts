import { describe, expect, it } from 'vitest';
import { listOperations, loadSigilOpenApi, type OperationInfo } from '../src/index.ts';
import { parseSpecOperations, readSpec, specPath } from './helpers.ts';

/** Operations we designed on top of the spec (dashboard auth, members, the document itself). */
const DESIGNED: ReadonlyArray<Pick<OperationInfo, 'method' | 'path' | 'auth' | 'idempotent' | 'service'> & { permission?: string }> = [
  { method: 'POST', path: '/v1/auth/sign-up', auth: 'P', idempotent: false, service: 'accounts' },
  { method: 'POST', path: '/v1/auth/sign-in', auth: 'P', idempotent: false, service: 'accounts' },
  { method: 'POST', path: '/v1/auth/sign-out', auth: 'D', idempotent: false, service: 'accounts' },
  { method: 'GET', path: '/v1/auth/session', auth: 'D', idempotent: false, service: 'accounts' },
  { method: 'POST', path: '/v1/auth/accept-invitation', auth: 'P', idempotent: false, service: 'accounts' },
  { method: 'GET', path: '/v1/organization/members', auth: 'D', idempotent: false, service: 'accounts' },
  { method: 'PATCH', path: '/v1/organization/members/{id}', auth: 'D', idempotent: false, service: 'accounts', permission: 'member:manage' },
  { method: 'DELETE', path: '/v1/organization/members/{id}', auth: 'D', idempotent: false, service: 'accounts', permission: 'member:manage' },
  { method: 'POST', path: '/v1/organization/invitations', auth: 'D', idempotent: false, service: 'accounts', permission: 'member:manage' },
  { method: 'GET', path: '/v1/organization/invitations', auth: 'D', idempotent: false, service: 'accounts', permission: 'member:manage' },
  { method: 'DELETE', path: '/v1/organization/invitations/{id}', auth: 'D', idempotent: false, service: 'accounts', permission: 'member:manage' },
  { method: 'GET', path: '/v1/openapi.json', auth: 'P', idempotent: false, service: 'gateway' },
  // Beyond the spec: the SSO sign-in flow (api-decisions, "Organization administration"): start, SAML ACS, OIDC callback, SP metadata.
  { method: 'GET', path: '/v1/auth/sso/start', auth: 'P', idempotent: false, service: 'accounts' },
  { method: 'POST', path: '/v1/auth/sso/saml/acs', auth: 'P', idempotent: false, service: 'accounts' },
  { method: 'GET', path: '/v1/auth/sso/oidc/callback', auth: 'P', idempotent: false, service: 'accounts' },
  { method: 'GET', path: '/v1/auth/sso/saml/metadata/{organizationId}/{providerId}', auth: 'P', idempotent: false, service: 'accounts' },
  // Beyond the spec: consistency proofs between two anchors, so monitors can check the log never forked.
  { method: 'GET', path: '/v1/public/anchors/{sequence}/consistency', auth: 'P', idempotent: false, service: 'evidence' },
];

const key = (method: string, path: string): string => `${method} ${path}`;

describe(`spec part 4 coverage (${specPath})`, () => {
  const spec = parseSpecOperations(readSpec());
  const ops = new Map(listOperations(loadSigilOpenApi()).map((op) => [key(op.method, op.path), op]));

  it('parses every endpoint table of part 4', () => {
    expect(spec.sections).toEqual(
      expect.arrayContaining([
        'Templates (K)',
        'Envelopes (K)',
        'Signing (S unless stated)',
        'Always-on links',
        'Viewers',
        'Webhooks',
        'API keys, directory, organization, SSO, billing, verification',
      ]),
    );
    expect(spec.operations.length).toBeGreaterThanOrEqual(80);
    const keys = spec.operations.map((o) => key(o.method, o.path));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each(parseSpecOperations(readSpec()).operations.map((o) => [key(o.method, o.path), o] as const))(
    '%s is in the document with the auth and idempotency of the spec',
    (name, specOp) => {
      const op = ops.get(name);
      expect(op, `missing operation ${name} (spec row: ${specOp.row})`).toBeDefined();
      expect(op?.auth, `x-auth of ${name}`).toBe(specOp.auth);
      expect(op?.idempotent, `x-idempotent of ${name}`).toBe(specOp.idempotent);
    },
  );

  it('keeps the spec hints on permissions', () => {
    expect(ops.get('GET /v1/usage')?.permission).toBe('billing:manage'); // "K (needs billing:manage)"
    for (const [name, op] of ops) {
      if (name.includes('/v1/webhook-endpoints') || name.startsWith('POST /v1/events/')) expect(op.permission, name).toBe('org:manage');
      if (name.includes('/v1/api-keys')) expect(op.permission, name).toBe('apikey:manage');
    }
  });

  it.each(DESIGNED.map((d) => [key(d.method, d.path), d] as const))('designed operation %s is present', (name, designed) => {
    const op = ops.get(name);
    expect(op, `missing designed operation ${name}`).toBeDefined();
    expect(op?.auth).toBe(designed.auth);
    expect(op?.idempotent).toBe(designed.idempotent);
    expect(op?.service).toBe(designed.service);
    expect(op?.permission).toBe(designed.permission);
  });

  it('has no operation beyond the spec and the designed ones (e.g. no /healthz)', () => {
    const allowed = new Set([...spec.operations.map((o) => key(o.method, o.path)), ...DESIGNED.map((d) => key(d.method, d.path))]);
    const extra = [...ops.keys()].filter((k) => !allowed.has(k));
    expect(extra).toEqual([]);
    expect(ops.has('GET /healthz')).toBe(false);
  });
});
