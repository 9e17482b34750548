import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createAjv, formatErrors, type JsonSchemaValidateFunction } from './ajv.ts';

/**
 * Domain events: what services tell each other through NATS JetStream (not the
 * public webhooks of spec part 6). JSON on the wire; each payload is described
 * by `proto/events/<type>.schema.json` (JSON Schema 2020-12) and typed below.
 * See docs/api-conventions.md, "Domain events".
 */

/** Stream of domain events (subjects `sigil.events.>`), limits retention. */
export const EVENTS_STREAM = 'SIGIL_EVENTS';
/** Subjects of {@link EVENTS_STREAM}. */
export const EVENTS_SUBJECTS = 'sigil.events.>';
/** Stream of jobs (subjects `sigil.jobs.>`), work-queue retention. */
export const JOBS_STREAM = 'SIGIL_JOBS';
/** Subjects of {@link JOBS_STREAM}. */
export const JOBS_SUBJECTS = 'sigil.jobs.>';

const EVENT_SUBJECT_PREFIX = 'sigil.events.';
const JOB_SUBJECT_PREFIX = 'sigil.jobs.';

import type * as Generated from './gen/events.ts';

/** The template as the `templates` service returns it (same shape as the API's `Template`). */
export type TemplateRecord = Generated.TemplateCreated['template'];

/** The payload of each event type, generated from `proto/events/<type>.schema.json` (`npm run types`). */
export type EventPayloads = { [T in keyof Generated.DomainEvents]-?: NonNullable<Generated.DomainEvents[T]> };

export type EventType = keyof EventPayloads;

/** Every event type, at run time. */
export const EVENT_TYPES = [
  'organization.created',
  'member.added',
  'member.removed',
  'member.role_changed',
  'apikey.created',
  'apikey.revoked',
  'session.revoked',
  'template.created',
  'template.deleted',
  'envelope.created',
  'envelope.ready',
  'recipient.sent',
  'envelope.voided',
  'envelope.expired',
  'recipient.viewed',
  'recipient.signed',
  'recipient.declined',
  'envelope.declined',
  'envelope.completed',
  'envelope.sealed',
  'envelope.seal_failed',
  'email.delivered',
  'email.suppressed',
  'envelope.reminded',
  'recipient.resent',
  'otp.sent',
  'otp.verified',
  'otp.failed',
  'attachment.uploaded',
  'signing_link.created',
  'signing_link.used',
  'viewer.added',
  'viewer.revoked',
  'viewer.opened',
] as const satisfies readonly EventType[];

// Compile-time proof that EVENT_TYPES lists every key of EventPayloads.
type MissingEventTypes = Exclude<EventType, (typeof EVENT_TYPES)[number]>;
const everyEventTypeListed: [MissingEventTypes] extends [never] ? true : MissingEventTypes = true;
void everyEventTypeListed;

export interface DomainEvent<T extends EventType = EventType> {
  /** `evt_` + 24 base62 characters; also the `Nats-Msg-Id` (publish de-duplication). */
  id: string;
  type: T;
  /** RFC 3339 timestamp of the change (not of publishing). */
  occurredAt: string;
  organizationId: string;
  data: EventPayloads[T];
}

/** A union of every concrete event, handy for `switch (event.type)`. */
export type AnyDomainEvent = { [T in EventType]: DomainEvent<T> }[EventType];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}

/** `sigil.events.<type>`, e.g. `sigil.events.apikey.revoked`. */
export function eventSubject(type: EventType): string {
  return EVENT_SUBJECT_PREFIX + type;
}

/** `sigil.jobs.<name>`, e.g. `sigil.jobs.envelopes.render`. */
export function jobSubject(name: string): string {
  if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(name)) {
    throw new Error(`invalid job name ${JSON.stringify(name)}: dot-separated tokens of a-z 0-9 _ -`);
  }
  return JOB_SUBJECT_PREFIX + name;
}

const eventsDir = new URL('../events/', import.meta.url);

/** Absolute path of the JSON Schema of the event envelope. */
export const domainEventSchemaPath: string = fileURLToPath(new URL('domain-event.schema.json', eventsDir));

/** Absolute path of the JSON Schema of one event type's payload. */
export function eventSchemaPath(type: EventType): string {
  return fileURLToPath(new URL(`${type}.schema.json`, eventsDir));
}

const schemaCache = new Map<string, Record<string, unknown>>();

function readSchema(path: string): Record<string, unknown> {
  let schema = schemaCache.get(path);
  if (!schema) {
    schema = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    schemaCache.set(path, schema);
  }
  return structuredClone(schema);
}

/** The payload schema of an event type (a fresh copy). */
export function loadEventSchema(type: EventType): Record<string, unknown> {
  return readSchema(eventSchemaPath(type));
}

/** The envelope schema (a fresh copy). */
export function loadDomainEventSchema(): Record<string, unknown> {
  return readSchema(domainEventSchemaPath);
}

interface CompiledValidators {
  envelope: JsonSchemaValidateFunction;
  payloads: Map<EventType, JsonSchemaValidateFunction>;
}

let validators: CompiledValidators | undefined;

function getValidators(): CompiledValidators {
  if (!validators) {
    const ajv = createAjv();
    const payloads = new Map<EventType, JsonSchemaValidateFunction>();
    for (const type of EVENT_TYPES) payloads.set(type, ajv.compile(loadEventSchema(type)));
    validators = { envelope: ajv.compile(loadDomainEventSchema()), payloads };
  }
  return validators;
}

export type EventValidation = { ok: true } | { ok: false; errors: string[] };

/**
 * Validates an event against the envelope schema and its type's payload
 * schema. Errors read `<JSON pointer> <message>`, e.g. `/data/keyHash must match pattern ...`.
 */
export function validateEvent(event: unknown): EventValidation {
  const { envelope, payloads } = getValidators();
  const errors: string[] = [];
  if (!envelope(event)) errors.push(...formatErrors(envelope.errors));
  if (event !== null && typeof event === 'object') {
    const { type, data } = event as { type?: unknown; data?: unknown };
    const payload = isEventType(type) ? payloads.get(type) : undefined;
    if (payload && data !== undefined && !payload(data)) errors.push(...formatErrors(payload.errors, '/data'));
  }
  return errors.length === 0 ? { ok: true } : { ok: false, errors };
}

export { randomBase62 } from './random.ts';
import { randomBase62 } from './random.ts';

/** A new event id: `evt_` + 24 base62 characters. */
export function newEventId(): string {
  return `evt_${randomBase62(24)}`;
}

/** Builds an event with a fresh id; `occurredAt` defaults to now. */
export function createEvent<T extends EventType>(
  type: T,
  organizationId: string,
  data: EventPayloads[T],
  occurredAt: Date = new Date(),
): DomainEvent<T> {
  return { id: newEventId(), type, occurredAt: occurredAt.toISOString(), organizationId, data };
}
