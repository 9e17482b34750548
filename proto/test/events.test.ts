import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  EVENTS_STREAM,
  EVENTS_SUBJECTS,
  EVENT_TYPES,
  JOBS_STREAM,
  JOBS_SUBJECTS,
  PERMISSIONS,
  ROLES,
  createAjv,
  createEvent,
  deref,
  eventSchemaPath,
  eventSubject,
  jobSubject,
  loadDomainEventSchema,
  loadEventSchema,
  loadSigilOpenApi,
  newEventId,
  validateEvent,
  type DomainEvent,
  type EventPayloads,
  type EventType,
} from '../src/index.ts';

const ORG = 'org_0123456789abcdefghijklmn';
const USR = 'usr_0123456789abcdefghijklmn';
const MEM = 'mem_0123456789abcdefghijklmn';
const TPL = 'tpl_0123456789abcdefghijklmn';
const HASH = 'a'.repeat(64);
const NOW = '2025-01-02T03:04:05.000Z';
const ENV = 'env_0123456789abcdefghijklmn';
const RCP = 'rcp_0123456789abcdefghijklmn';
const ENVELOPE = { id: ENV, object: 'envelope' as const, status: 'sent' as const, seal: 'not_started' as const, testMode: true, recipients: [{ id: 'rcp_0123456789abcdefghijklmn', role: 'client', status: 'sent' }] };

/** A valid payload per type. Typed against EventPayloads, so tsc checks the TS side too. */
const GOOD: { [T in EventType]: EventPayloads[T] } = {
  'organization.created': { name: 'Acme', ownerUserId: USR, ownerEmail: 'ada@example.com' },
  'member.added': { memberId: MEM, userId: USR, email: 'ada@example.com', role: 'owner' },
  'member.removed': { memberId: MEM, userId: USR },
  'member.role_changed': { memberId: MEM, userId: USR, previousRole: 'member', role: 'admin' },
  'apikey.created': { apiKeyId: 'key_0123456789abcdefghijklmn', mode: 'test', scopes: ['template:read'], createdBy: USR },
  'apikey.revoked': { apiKeyId: 'key_0123456789abcdefghijklmn', keyHash: HASH },
  'session.revoked': { sessionHash: HASH },
  'template.created': {
    template: {
      id: TPL,
      object: 'template',
      name: 'NDA',
      description: null,
      metadata: { team: 'legal' },
      latestVersion: null,
      hasDraft: false,
      createdAt: NOW,
      updatedAt: NOW,
    },
  },
  'template.deleted': { templateId: TPL },
  'envelope.created': { envelopeId: 'env_0123456789abcdefghijklmn', templateId: TPL, testMode: true },
  'envelope.ready': { envelopeId: ENV, testMode: true, envelope: ENVELOPE },
  'recipient.sent': { envelopeId: ENV, testMode: true, recipientId: 'rcp_0123456789abcdefghijklmn', envelope: ENVELOPE },
  'envelope.voided': { envelopeId: ENV, testMode: true, reason: 'Wrong price', envelope: { ...ENVELOPE, status: 'voided' } },
  'envelope.expired': { envelopeId: ENV, testMode: false, envelope: { ...ENVELOPE, status: 'expired', testMode: false } },
  'recipient.viewed': { envelopeId: ENV, testMode: true, recipientId: RCP, from: '203.0.113.9', userAgent: 'Firefox', envelope: ENVELOPE },
  'recipient.signed': { envelopeId: ENV, testMode: true, recipientId: RCP, from: '203.0.113.9', userAgent: 'Firefox', envelope: ENVELOPE },
  'recipient.declined': { envelopeId: ENV, testMode: true, recipientId: RCP, reason: 'Wrong name', envelope: { ...ENVELOPE, status: 'declined' } },
  'envelope.declined': { envelopeId: ENV, testMode: true, recipientId: RCP, reason: null, envelope: { ...ENVELOPE, status: 'declined' } },
  'envelope.completed': { envelopeId: ENV, testMode: true, values: { variables: { company: 'Acme' }, recipients: { client: { sig: { kind: 'typed', text: 'Ada' } } } }, envelope: { ...ENVELOPE, status: 'completed', seal: 'pending' } },
  'envelope.sealed': { envelopeId: ENV, testMode: true, sha256: HASH, envelope: { ...ENVELOPE, status: 'completed', seal: 'sealed' } },
  'envelope.seal_failed': { envelopeId: ENV, testMode: true, reason: 'the signing key is unreadable', envelope: { ...ENVELOPE, status: 'completed', seal: 'failed' } },
  'email.delivered': { envelopeId: ENV, testMode: true, recipientId: RCP, kind: 'your_turn', address: 'ada@example.com' },
  'email.suppressed': { envelopeId: ENV, testMode: true, kind: 'completed', address: 'cc@example.com' },
  'envelope.reminded': { envelopeId: ENV, testMode: false, recipientId: RCP },
  'recipient.resent': { envelopeId: ENV, testMode: false, recipientId: RCP, actor: { kind: 'api_key', id: 'key_0123456789abcdefghijklmn' } },
  'otp.sent': { envelopeId: ENV, testMode: true, recipientId: RCP, channel: 'sms', from: '203.0.113.9', userAgent: 'Firefox' },
  'otp.verified': { envelopeId: ENV, testMode: true, recipientId: RCP, channel: 'email' },
  'otp.failed': { envelopeId: ENV, testMode: true, recipientId: RCP, channel: 'email', attempts: 2 },
  'attachment.uploaded': { envelopeId: ENV, testMode: true, recipientId: RCP, attachmentId: 'att_0123456789abcdefghijklmn', field: 'id_scan', sha256: HASH, size: 1024 },
  'signing_link.created': { signingLinkId: 'lnk_0123456789abcdefghijklmn', templateId: TPL, testMode: false },
  'signing_link.used': { envelopeId: ENV, signingLinkId: 'lnk_0123456789abcdefghijklmn', recipientId: RCP, testMode: false, envelope: { ...ENVELOPE, testMode: false } },
  'viewer.added': { envelopeId: ENV, testMode: true, viewerId: 'vwr_0123456789abcdefghijklmn', email: 'board@example.com', name: null, documentAccess: false, actor: { kind: 'api_key', id: 'key_0123456789abcdefghijklmn' } },
  'viewer.revoked': { envelopeId: ENV, testMode: true, viewerId: 'vwr_0123456789abcdefghijklmn', email: 'board@example.com' },
  'viewer.opened': { envelopeId: ENV, testMode: true, viewerId: 'vwr_0123456789abcdefghijklmn', email: 'board@example.com', actor: { kind: 'viewer', id: 'vwr_0123456789abcdefghijklmn' } },
};

/** One way to break each payload. */
const BAD: { [T in EventType]: unknown } = {
  'organization.created': { name: '', ownerUserId: USR, ownerEmail: 'ada@example.com' },
  'member.added': { memberId: MEM, userId: USR, email: 'ada@example.com', role: 'superuser' },
  'member.removed': { memberId: MEM },
  'member.role_changed': { memberId: MEM, userId: USR, previousRole: 'member', role: 'admin', extra: 1 },
  'apikey.created': { apiKeyId: 'key_0123456789abcdefghijklmn', mode: 'test', scopes: ['template:delete'], createdBy: USR },
  'apikey.revoked': { apiKeyId: 'key_0123456789abcdefghijklmn', keyHash: 'A'.repeat(64) },
  'session.revoked': { sessionHash: 'not-a-hash' },
  'template.created': { template: { id: TPL, name: 'NDA' } },
  'template.deleted': { templateId: 'env_0123456789abcdefghijklmn' },
  'envelope.created': { envelopeId: 'env_0123456789abcdefghijklmn', templateId: TPL, testMode: 'yes' },
  'envelope.ready': { envelopeId: ENV, testMode: true },
  'recipient.sent': { envelopeId: ENV, testMode: true, envelope: ENVELOPE },
  'envelope.voided': { envelopeId: ENV, testMode: true, envelope: { ...ENVELOPE, status: 'halted' } },
  'envelope.expired': { envelopeId: 'tpl_0123456789abcdefghijklmn', testMode: false, envelope: ENVELOPE },
  'recipient.viewed': { envelopeId: ENV, testMode: true, envelope: ENVELOPE },
  'recipient.signed': { envelopeId: ENV, testMode: true, recipientId: 'env_0123456789abcdefghijklmn', envelope: ENVELOPE },
  'recipient.declined': { envelopeId: ENV, testMode: true, recipientId: RCP, reason: 7, envelope: ENVELOPE },
  'envelope.declined': { envelopeId: ENV, testMode: 'no', recipientId: RCP, envelope: ENVELOPE },
  'envelope.completed': { envelopeId: ENV, testMode: true, values: { variables: {} }, envelope: ENVELOPE },
  'envelope.sealed': { envelopeId: ENV, testMode: true, sha256: 'nothex', envelope: ENVELOPE },
  'envelope.seal_failed': { envelopeId: ENV, testMode: true, reason: '', envelope: ENVELOPE },
  'email.delivered': { envelopeId: ENV, testMode: true, kind: 'fax', address: 'ada@example.com' },
  'email.suppressed': { envelopeId: ENV, testMode: true, kind: 'completed' },
  'envelope.reminded': { envelopeId: ENV, testMode: false },
  'recipient.resent': { envelopeId: ENV, testMode: false, recipientId: RCP, actor: { kind: 'robot' } },
  'otp.sent': { envelopeId: ENV, testMode: true, recipientId: RCP, channel: 'pigeon' },
  'otp.verified': { envelopeId: ENV, testMode: true, channel: 'email' },
  'otp.failed': { envelopeId: ENV, testMode: true, recipientId: RCP, channel: 'email', attempts: 0 },
  'attachment.uploaded': { envelopeId: ENV, testMode: true, recipientId: RCP, attachmentId: 'att_x', field: 'id_scan', sha256: HASH, size: 1024 },
  'signing_link.created': { signingLinkId: 'lnk_0123456789abcdefghijklmn', templateId: TPL },
  'signing_link.used': { envelopeId: ENV, signingLinkId: 'lnk_0123456789abcdefghijklmn', testMode: false, envelope: ENVELOPE },
  'viewer.added': { envelopeId: ENV, testMode: true, viewerId: 'vwr_0123456789abcdefghijklmn', email: 'board@example.com' },
  'viewer.revoked': { envelopeId: ENV, testMode: true, viewerId: 'rcp_0123456789abcdefghijklmn', email: 'board@example.com' },
  'viewer.opened': { envelopeId: ENV, testMode: true, viewerId: 'vwr_0123456789abcdefghijklmn', email: 'board@example.com', actor: { kind: 'recipient', id: 'x' } },
};

function event<T extends EventType>(type: T, data: unknown): DomainEvent<T> {
  return { id: 'evt_0123456789abcdefghijklmn', type, occurredAt: NOW, organizationId: ORG, data: data as EventPayloads[T] };
}

describe('domain events', () => {
  it('streams and subjects', () => {
    expect(EVENTS_STREAM).toBe('SIGIL_EVENTS');
    expect(JOBS_STREAM).toBe('SIGIL_JOBS');
    expect(EVENTS_SUBJECTS).toBe('sigil.events.>');
    expect(JOBS_SUBJECTS).toBe('sigil.jobs.>');
    expect(eventSubject('apikey.revoked')).toBe('sigil.events.apikey.revoked');
    expect(jobSubject('envelopes.render')).toBe('sigil.jobs.envelopes.render');
    expect(() => jobSubject('Bad Name')).toThrow();
    expect(() => jobSubject('a.>')).toThrow();
  });

  it.each(EVENT_TYPES.map((t) => [t]))('%s: the payload schema exists and compiles (JSON Schema 2020-12)', (type) => {
    expect(existsSync(eventSchemaPath(type))).toBe(true);
    const schema = loadEventSchema(type);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toBe(`https://sigil.dev/schemas/events/${type}.schema.json`);
    expect(typeof createAjv().compile(schema)).toBe('function');
  });

  it('the envelope schema compiles and lists exactly the event types', () => {
    const schema = loadDomainEventSchema();
    expect(typeof createAjv().compile(schema)).toBe('function');
    expect((schema.properties as { type: { enum: string[] } }).type.enum).toEqual([...EVENT_TYPES]);
  });

  it.each(EVENT_TYPES.map((t) => [t]))('%s: validateEvent accepts a good event and rejects a bad one', (type) => {
    expect(validateEvent(event(type, GOOD[type]))).toEqual({ ok: true });
    const bad = validateEvent(event(type, BAD[type]));
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors.every((e) => e.startsWith('/data'))).toBe(true);
  });

  it('validateEvent rejects a bad envelope', () => {
    const good = event('template.deleted', GOOD['template.deleted']);
    const check = (value: unknown): string[] => {
      const r = validateEvent(value);
      return r.ok ? [] : r.errors;
    };
    expect(check({ ...good, id: 'evt_short' })).toContainEqual(expect.stringContaining('/id'));
    expect(check({ ...good, type: 'template.renamed' })).toContainEqual(expect.stringContaining('/type'));
    expect(check({ ...good, occurredAt: '2025-02-30T00:00:00Z' })).toContainEqual(expect.stringContaining('/occurredAt'));
    expect(check({ ...good, organizationId: undefined })).not.toEqual([]);
    expect(check({ ...good, extra: true })).not.toEqual([]);
    expect(check({ ...good, data: undefined })).not.toEqual([]);
    expect(check(null)).not.toEqual([]);
    expect(check('event')).not.toEqual([]);
  });

  it('createEvent builds valid events with fresh ids', () => {
    const a = createEvent('session.revoked', ORG, { sessionHash: HASH });
    const b = createEvent('session.revoked', ORG, { sessionHash: HASH });
    expect(a.id).toMatch(/^evt_[A-Za-z0-9]{24}$/);
    expect(a.id).not.toBe(b.id);
    expect(validateEvent(a)).toEqual({ ok: true });
    expect(newEventId()).toMatch(/^evt_[A-Za-z0-9]{24}$/);
  });

  it('payload enums agree with proto/src/auth.ts', () => {
    const props = (type: EventType): Record<string, { enum?: unknown; items?: { enum?: unknown } }> =>
      loadEventSchema(type).properties as Record<string, { enum?: unknown; items?: { enum?: unknown } }>;
    expect(props('member.added').role?.enum).toEqual([...ROLES]);
    expect(props('member.role_changed').role?.enum).toEqual([...ROLES]);
    expect(props('apikey.created').scopes?.items?.enum).toEqual([...PERMISSIONS]);
  });

  it('template.created carries the API Template shape', () => {
    const doc = loadSigilOpenApi();
    const inline = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(inline);
      if (node === null || typeof node !== 'object') return node;
      const resolved = '$ref' in node ? deref(doc, node) : node;
      return Object.fromEntries(
        Object.entries(resolved as Record<string, unknown>)
          .filter(([k, v]) => !((k === 'description' && typeof v === 'string') || k === 'examples'))
          .map(([k, v]) => [k, inline(v)]),
      );
    };
    const fromEvent = (loadEventSchema('template.created').properties as { template: unknown }).template;
    expect(inline(fromEvent)).toEqual(inline(doc.components?.schemas?.Template));
  });
});
