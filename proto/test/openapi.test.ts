import { readFileSync } from 'node:fs';
import path from 'node:path';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  JSON_SCHEMA_FORMATS,
  PERMISSIONS,
  ROLES,
  SECURITY_BY_AUTH,
  SIGIL,
  checkOpenApiDocument,
  checkSigilConventions,
  createSchemaValidator,
  deref,
  listOperations,
  loadSigilOpenApi,
  resolveService,
  sigilOpenApiPath,
  type OpenApiDocument,
  type OpenApiParameter,
} from '../src/index.ts';
import { repoRoot } from './helpers.ts';

/**
 * openapi-backend validates definitions against the OpenAPI 3.0 schema only,
 * which rejects 3.1 documents (`const`, type arrays). Skip that step; strict
 * init still dereferences every $ref (failing on a broken one), builds the
 * router and compiles every request and response validator.
 */
class Backend31 extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document;
  }
}

function backend(definition: OpenApiDocument): Backend31 {
  return new Backend31({
    definition: definition as unknown as Document,
    strict: true,
    customizeAjv: (ajv) => {
      for (const [name, format] of Object.entries(JSON_SCHEMA_FORMATS)) ajv.addFormat(name, format);
      return ajv;
    },
  });
}

describe('sigil.v1.yaml is valid OpenAPI 3.1', () => {
  const doc = loadSigilOpenApi();

  it('declares OpenAPI 3.1.0, version 1.0.0, no servers base path', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers).toBeUndefined();
  });

  it('passes the structural and semantic checks', async () => {
    expect(await checkOpenApiDocument(doc)).toEqual([]);
  });

  it('fails the checks on a broken $ref', async () => {
    const broken = loadSigilOpenApi();
    const schema = broken.paths['/v1/templates']?.post?.requestBody as { content: Record<string, { schema: unknown }> };
    schema.content['application/json'] = { schema: { $ref: '#/components/schemas/DoesNotExist' } };
    expect(await checkOpenApiDocument(broken)).toContainEqual(expect.stringContaining('$ref #/components/schemas/DoesNotExist does not resolve'));
  });

  it('fails the checks on an undeclared path parameter, a duplicate operationId and a typo', async () => {
    const broken = loadSigilOpenApi();
    const item = broken.paths['/v1/templates/{id}'];
    if (!item?.get || !item.delete) throw new Error('fixture');
    item.parameters = [];
    item.delete.operationId = 'getTemplate';
    (item.get as Record<string, unknown>).requestbody = {};
    const problems = await checkOpenApiDocument(broken);
    expect(problems).toContainEqual(expect.stringContaining('path parameter {id} is not declared'));
    expect(problems).toContainEqual(expect.stringContaining('operationId getTemplate also used by'));
    expect(problems).toContainEqual(expect.stringContaining('requestbody'));
  });

  it('fails the checks on a schema that is not valid JSON Schema 2020-12', async () => {
    const broken = loadSigilOpenApi();
    (broken.components!.schemas!.Template as Record<string, unknown>).minLenght = 1;
    expect(await checkOpenApiDocument(broken)).toContainEqual(expect.stringContaining('minLenght'));
  });

  let api: Backend31;
  beforeAll(async () => {
    api = backend(loadSigilOpenApi());
    await api.init();
  }, 120_000);

  it('initialises openapi-backend in strict mode (refs, router, validators)', () => {
    expect(api.getOperations()).toHaveLength(listOperations(doc).length);
    expect(api.matchOperation({ method: 'get', path: '/v1/public/anchors/latest', headers: {} })?.operationId).toBe('getLatestAnchor');
    expect(api.matchOperation({ method: 'get', path: '/v1/public/anchors/42', headers: {} })?.operationId).toBe('getAnchor');
    expect(api.matchOperation({ method: 'get', path: SIGIL.keysPath, headers: {} })?.operationId).toBe('getEvidenceKeys');
  });

  it('openapi-backend rejects a document with a broken $ref', async () => {
    const broken = loadSigilOpenApi();
    const op = broken.paths['/v1/templates']?.get;
    if (!op) throw new Error('fixture');
    op.parameters = [...(op.parameters ?? []), { $ref: '#/components/parameters/Nope' }];
    await expect(backend(broken).init()).rejects.toThrow();
  }, 60_000);

  it('validates requests with the bounds of the document', () => {
    const ok = api.validateRequest({ method: 'get', path: '/v1/templates', query: 'limit=100&q=abc', headers: {} });
    expect(ok.errors).toBeNull();
    const tooSmall = api.validateRequest({ method: 'get', path: '/v1/templates', query: 'limit=0', headers: {} });
    expect(tooSmall.errors?.map((e) => e.instancePath)).toContain('/query/limit');
    const longCursor = api.validateRequest({ method: 'get', path: '/v1/envelopes', query: `cursor=${'a'.repeat(201)}`, headers: {} });
    expect(longCursor.errors?.map((e) => e.instancePath)).toContain('/query/cursor');
    const badId = api.validateRequest({ method: 'get', path: '/v1/templates/tpl_short', headers: {} });
    expect(badId.errors?.map((e) => e.instancePath)).toContain('/path/id');
    const badKey = api.validateRequest({
      method: 'post',
      path: '/v1/templates',
      body: { name: 'NDA' },
      headers: { 'content-type': 'application/json', 'idempotency-key': 'caf\u00e9' },
    });
    expect(badKey.errors?.map((e) => e.instancePath)).toContain('/header/idempotency-key');
    // a bad x-request-id is replaced by the server, never rejected
    const oddRequestId = api.validateRequest({ method: 'get', path: '/v1/templates', headers: { 'x-request-id': '\u00e9!' } });
    expect(oddRequestId.errors).toBeNull();
  });

  it('validates responses against the designed schemas', () => {
    const template = {
      id: 'tpl_0123456789abcdefghijklmn',
      object: 'template',
      name: 'NDA',
      description: null,
      metadata: {},
      latestVersion: 1,
      hasDraft: false,
      createdAt: '2025-01-02T03:04:05Z',
      updatedAt: '2025-01-02T03:04:05Z',
    };
    expect(api.validateResponse(template, 'getTemplate', 200).errors).toBeNull();
    expect(api.validateResponse({ ...template, createdAt: 'yesterday' }, 'getTemplate', 200).errors).not.toBeNull();
    expect(api.validateResponse({ ...template, unknown: true }, 'getTemplate', 200).errors).not.toBeNull();
  });
});

describe('Sigil conventions', () => {
  const doc = loadSigilOpenApi();
  const ops = listOperations(doc);

  it('hold for every operation', () => {
    expect(checkSigilConventions(doc)).toEqual([]);
  });

  it('operationIds are unique and lowerCamelCase', () => {
    const ids = ops.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/);
  });

  it('every operation has x-service, x-auth and security consistent with x-auth', () => {
    for (const info of ops) {
      const op = doc.paths[info.path]?.[info.method.toLowerCase() as 'get'];
      expect(op?.['x-service'], info.operationId).toBeTruthy();
      expect(['K', 'D', 'S', 'V', 'P']).toContain(op?.['x-auth']);
      expect(op?.security, info.operationId).toEqual(SECURITY_BY_AUTH[info.auth]);
    }
  });

  it('resolveService(path) equals x-service for every operation', () => {
    for (const op of ops) expect(resolveService(op.path), `${op.method} ${op.path}`).toBe(op.service);
  });

  it('routes the evidence and webhooks carve-outs', () => {
    const byId = new Map(ops.map((o) => [o.operationId, o]));
    expect(byId.get('listEnvelopeEvents')?.service).toBe('evidence');
    expect(byId.get('streamEnvelopeEvents')?.service).toBe('evidence');
    expect(byId.get('redeliverEvent')?.service).toBe('webhooks');
    expect(byId.get('getOpenApiDocument')?.service).toBe('gateway');
  });

  it('limit, cursor and q carry their bounds wherever they appear', () => {
    let seen = 0;
    for (const info of ops) {
      const item = doc.paths[info.path];
      const op = item?.[info.method.toLowerCase() as 'get'];
      for (const p of [...(op?.parameters ?? []), ...(item?.parameters ?? [])]) {
        const param = deref<OpenApiParameter>(doc, p);
        if (param?.in !== 'query') continue;
        const schema = param.schema as Record<string, unknown>;
        if (param.name === 'limit') expect(schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
        else if (param.name === 'cursor') expect(schema.maxLength).toBe(200);
        else if (param.name === 'q') expect(schema.maxLength).toBe(200);
        else continue;
        seen++;
      }
    }
    expect(seen).toBeGreaterThan(20);
  });

  it('the shared parameters are as specified', () => {
    const params = doc.components?.parameters ?? {};
    expect(params.IdempotencyKey).toMatchObject({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
    });
    expect(params.RequestId).toMatchObject({ name: 'x-request-id', in: 'header', required: false, schema: { type: 'string' } });
    expect(params.RequestId?.description).toMatch(/8.*128/);
  });

  it('declares the security schemes', () => {
    expect(doc.components?.securitySchemes).toEqual({
      bearerApiKey: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      apiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key' }),
      sessionCookie: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: SIGIL.sessionCookie }),
      signerToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      viewerToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
  });

  it('the Permission and Role enums match proto/src/auth.ts', () => {
    expect(doc.components?.schemas?.Permission).toMatchObject({ enum: [...PERMISSIONS] });
    expect(doc.components?.schemas?.Role).toMatchObject({ enum: [...ROLES] });
  });

  it('product words in the document agree with SIGIL', () => {
    const text = readFileSync(sigilOpenApiPath, 'utf8');
    expect(doc.paths[SIGIL.keysPath]).toBeDefined();
    expect(text).toContain(`${SIGIL.keyPrefixLive.slice(0, -5)}(live|test)_`);
    expect(text).toContain(`'^${SIGIL.sessionTokenPrefix}`);
    expect(text).toContain(`'^${SIGIL.accessTokenPrefix}`);
    expect(text).toContain(`const: ${SIGIL.webhookUserAgent}`);
    expect(text).toContain(`${SIGIL.problemsBaseUrl}/validation-failed`);
    expect(text).toContain(`${SIGIL.sessionCookie}=`);
  });
});

describe('designed schemas', () => {
  const doc = loadSigilOpenApi();
  const validate = createSchemaValidator(doc);
  const now = '2025-01-02T03:04:05.000Z';
  const user = { id: 'usr_0123456789abcdefghijklmn', object: 'user', email: 'ada@example.com', name: 'Ada', createdAt: now };
  const organization = { id: 'org_0123456789abcdefghijklmn', object: 'organization', name: 'Acme', createdAt: now };
  const template = {
    id: 'tpl_0123456789abcdefghijklmn',
    object: 'template',
    name: 'NDA',
    description: null,
    metadata: { team: 'legal' },
    latestVersion: null,
    hasDraft: true,
    createdAt: now,
    updatedAt: now,
  };
  const apiKey = {
    id: 'key_0123456789abcdefghijklmn',
    object: 'api_key',
    name: 'CI',
    mode: 'test',
    scopes: ['template:read', 'envelope:send'],
    prefix: 'sgl_test_Ab3',
    createdAt: now,
    expiresAt: null,
    lastUsedAt: null,
    revokedAt: null,
    createdBy: user.id,
  };
  const invitation = {
    id: 'inv_0123456789abcdefghijklmn',
    object: 'invitation',
    email: 'bob@example.com',
    role: 'member',
    expiresAt: now,
    createdAt: now,
    acceptedAt: null,
  };

  it('Template is exact', () => {
    expect(validate('Template', template)).toEqual([]);
    expect(validate('Template', { ...template, extra: 1 })).not.toEqual([]);
    expect(validate('Template', { ...template, id: 'tpl_short' })).not.toEqual([]);
    const { hasDraft: _omitted, ...withoutHasDraft } = template;
    expect(validate('Template', withoutHasDraft)).not.toEqual([]);
    expect(validate('TemplateList', { object: 'list', data: [template], hasMore: false, nextCursor: null })).toEqual([]);
  });

  it('CreateTemplate enforces its bounds', () => {
    expect(validate('CreateTemplate', { name: 'NDA', description: 'x', metadata: { 'a.b-c_d': 'v' } })).toEqual([]);
    expect(validate('CreateTemplate', { name: '' })).not.toEqual([]);
    expect(validate('CreateTemplate', { name: 'x'.repeat(201) })).not.toEqual([]);
    expect(validate('CreateTemplate', { name: 'x', description: 'x'.repeat(2001) })).not.toEqual([]);
    expect(validate('CreateTemplate', { name: 'x', metadata: { 'bad key': 'v' } })).not.toEqual([]);
    expect(validate('CreateTemplate', { name: 'x', metadata: { k: 'v'.repeat(501) } })).not.toEqual([]);
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    expect(validate('CreateTemplate', { name: 'x', metadata: many })).not.toEqual([]);
    expect(validate('CreateTemplate', { name: 'x', other: 1 })).not.toEqual([]);
  });

  it('ApiKey, ApiKeyCreated and CreateApiKey are exact', () => {
    expect(validate('ApiKey', apiKey)).toEqual([]);
    expect(validate('ApiKey', { ...apiKey, secret: 'sgl_test_x' })).not.toEqual([]);
    expect(validate('ApiKeyCreated', { ...apiKey, secret: `${SIGIL.keyPrefixTest}Ab3${'x'.repeat(29)}` })).toEqual([]);
    expect(validate('ApiKeyCreated', apiKey)).not.toEqual([]);
    expect(validate('ApiKeyList', { object: 'list', data: [apiKey], hasMore: true, nextCursor: 'c1' })).toEqual([]);
    expect(validate('CreateApiKey', { name: 'CI', mode: 'live', expiresInDays: 365, scopes: ['envelope:read'] })).toEqual([]);
    expect(validate('CreateApiKey', { name: 'CI', mode: 'live', expiresInDays: 366 })).not.toEqual([]);
    expect(validate('CreateApiKey', { name: 'CI', mode: 'live', scopes: [] })).not.toEqual([]);
    expect(validate('CreateApiKey', { name: 'CI', mode: 'live', scopes: ['envelope:read', 'envelope:read'] })).not.toEqual([]);
    expect(validate('CreateApiKey', { name: 'CI', mode: 'prod' })).not.toEqual([]);
  });

  it('ApiKeyCreated is ApiKey plus secret; InvitationCreated is Invitation plus token', () => {
    const props = (name: string): Record<string, unknown> =>
      (doc.components?.schemas?.[name] as { properties: Record<string, unknown> }).properties;
    const required = (name: string): string[] => (doc.components?.schemas?.[name] as { required: string[] }).required;
    expect(props('ApiKeyCreated')).toEqual({ ...props('ApiKey'), secret: expect.anything() });
    expect(required('ApiKeyCreated')).toEqual([...required('ApiKey'), 'secret']);
    expect(props('InvitationCreated')).toEqual({ ...props('Invitation'), token: expect.anything() });
    expect(required('InvitationCreated')).toEqual([...required('Invitation'), 'token']);
  });

  it('Session, Member, Invitation and the dashboard bodies are exact', () => {
    const session = { object: 'session', user, organization, role: 'owner', permissions: [...PERMISSIONS], expiresAt: now };
    expect(validate('Session', session)).toEqual([]);
    expect(validate('Session', { ...session, token: 'x' })).not.toEqual([]);
    const member = { id: 'mem_0123456789abcdefghijklmn', object: 'member', user, role: 'admin', permissions: ['member:manage'], createdAt: now };
    expect(validate('Member', member)).toEqual([]);
    expect(validate('MemberList', { object: 'list', data: [member], hasMore: false, nextCursor: null })).toEqual([]);
    expect(validate('Invitation', invitation)).toEqual([]);
    expect(validate('InvitationCreated', { ...invitation, token: 'tok' })).toEqual([]);
    expect(validate('SignUp', { organizationName: 'Acme', name: 'Ada', email: 'ada@example.com', password: 'x'.repeat(12) })).toEqual([]);
    expect(validate('SignUp', { organizationName: 'Acme', name: 'Ada', email: 'ada@example.com', password: 'short' })).not.toEqual([]);
    expect(validate('SignUp', { organizationName: 'Acme', name: 'Ada', email: 'not-an-email', password: 'x'.repeat(12) })).not.toEqual([]);
    expect(validate('SignIn', { email: 'ada@example.com', password: 'p', organizationId: organization.id })).toEqual([]);
    expect(validate('SignIn', { email: 'ada@example.com', password: '' })).not.toEqual([]);
    expect(validate('AcceptInvitation', { token: 't', name: 'Bob', password: 'x'.repeat(12) })).toEqual([]);
    expect(validate('UpdateMember', { role: 'viewer' })).toEqual([]);
    expect(validate('UpdateMember', { role: 'root' })).not.toEqual([]);
    expect(validate('CreateInvitation', { email: 'bob@example.com', role: 'member', extra: true })).not.toEqual([]);
  });

  it('Problem has the documented shape and pointer rooting', () => {
    const problem = {
      type: `${SIGIL.problemsBaseUrl}/validation-failed`,
      title: 'Validation failed',
      status: 400,
      detail: 'Invalid request.',
      requestId: 'req_x',
      errors: [
        { pointer: '/body/name', detail: 'required' },
        { pointer: '/query/limit', detail: 'must be <= 100' },
        { pointer: '/path/id', detail: 'bad id' },
        { pointer: '/header/idempotency-key', detail: 'too long' },
      ],
    };
    expect(validate('Problem', problem)).toEqual([]);
    expect(validate('Problem', { ...problem, upgradeUrl: 'https://app.sigil.dev/billing' })).toEqual([]);
    expect(validate('Problem', { ...problem, errors: [{ pointer: '/name', detail: 'x' }] })).not.toEqual([]);
    expect(validate('Problem', { ...problem, requestId: undefined })).not.toEqual([]);
  });

  it('Billing follows part 2 of the spec', () => {
    const billing = {
      object: 'billing',
      plan: 'team',
      status: 'active',
      currentPeriodEnd: now,
      cancelAtPeriodEnd: false,
      hasPaymentMethod: true,
      sendingBlocked: false,
      usage: { completedEnvelopes: 3, included: 500, overage: 0, periodStart: now, periodEnd: now, addOns: { smsOtp: 0, idCheck: 0, qesSignature: 0 } },
      upcomingInvoice: null,
      entitlements: {
        plan: 'team',
        includedEnvelopes: 500,
        overageAllowed: true,
        features: { ssoConnections: 1, scim: false, enforcedSso: false, branding: true, signingLinks: true, sms: true, viewersPerEnvelope: 5, viewerDocumentAccess: true, auditExport: false },
      },
    };
    expect(validate('Billing', billing)).toEqual([]);
    expect(validate('Billing', { ...billing, entitlements: { ...billing.entitlements, features: { ...billing.entitlements.features, viewersPerEnvelope: null } } })).toEqual([]);
    expect(validate('Billing', { ...billing, sendingBlocked: undefined })).not.toEqual([]);
  });

  it('the webhook payload of part 6 carries testMode and the envelope', () => {
    const envelope = {
      id: 'env_0123456789abcdefghijklmn',
      object: 'envelope',
      status: 'completed',
      seal: 'pending',
      testMode: true,
      externalId: null,
      metadata: {},
      recipients: [{ id: 'rcp_0123456789abcdefghijklmn', role: 'Signer', status: 'completed' }],
      expiresAt: now,
    };
    const event = {
      id: 'evt_0123456789abcdefghijklmn',
      type: 'envelope.completed',
      createdAt: now,
      testMode: true,
      data: { envelope, values: { variables: { name: 'Ada' }, recipients: { Signer: { f1: 'yes' } } } },
    };
    expect(validate('WebhookEvent', event)).toEqual([]);
    expect(validate('WebhookEvent', { ...event, testMode: undefined })).not.toEqual([]);
    expect(validate('Envelope', { ...envelope, status: 'draft' })).not.toEqual([]);
  });
});

describe('loadSigilOpenApi', () => {
  it('returns a fresh copy each call', () => {
    const a = loadSigilOpenApi();
    const b = loadSigilOpenApi();
    expect(a).not.toBe(b);
    a.info.title = 'mutated';
    delete a.paths['/v1/templates'];
    const c = loadSigilOpenApi();
    expect(c.info.title).toBe('Sigil API');
    expect(c.paths['/v1/templates']).toBeDefined();
  });

  it('matches the YAML file on disk', () => {
    expect(loadSigilOpenApi()).toEqual(parse(readFileSync(sigilOpenApiPath, 'utf8')));
  });

  it('listOperations reports method, path, service, auth, permission and idempotency', () => {
    const ops = listOperations(loadSigilOpenApi());
    expect(ops.find((o) => o.operationId === 'createTemplate')).toEqual({
      operationId: 'createTemplate',
      method: 'POST',
      path: '/v1/templates',
      service: 'templates',
      auth: 'K',
      permission: 'template:write',
      idempotent: true,
    });
    expect(ops.find((o) => o.operationId === 'listMembers')).toEqual({
      operationId: 'listMembers',
      method: 'GET',
      path: '/v1/organization/members',
      service: 'accounts',
      auth: 'D',
      idempotent: false,
    });
    expect(ops.find((o) => o.operationId === 'createApiKey')).toMatchObject({ auth: 'D', permission: 'apikey:manage', idempotent: false });
  });
});

describe('docs/api-conventions.md', () => {
  it('lists exactly the operations of the document', () => {
    const docPath = path.resolve(repoRoot, 'docs/api-conventions.md');
    const rows = readFileSync(docPath, 'utf8')
      .split('\n')
      .map((line) => /^\| `([A-Za-z]+)` \| `([A-Z]+) (\S+)` \| (\w+) \| ([KDSVP]) \| (?:`([a-z:]+)`|-) \| (Idem)? \|$/.exec(line))
      .filter((m) => m !== null)
      .map((m) => ({
        operationId: m[1],
        method: m[2],
        path: m[3],
        service: m[4],
        auth: m[5],
        ...(m[6] ? { permission: m[6] } : {}),
        idempotent: m[7] === 'Idem',
      }));
    expect(rows).toEqual(listOperations(loadSigilOpenApi()));
  });
});
