import { createHash } from 'node:crypto';
import { pointerTo, type FieldError } from '@sigil/kit/errors';
import type { TemplateField } from '@sigil/proto/internal-templates';
import { invalid } from './create-input.ts';

export type SignatureValue = { kind: 'typed'; text: string } | { kind: 'drawn'; image: string };
export type FieldValue = SignatureValue | string | boolean;

const PNG_DATA_URL = /^data:image\/png;base64,([A-Za-z0-9+/]+={0,2})$/;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const MAX_DRAWN_BYTES = 1024 * 1024;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ATTACHMENT_ID = /^att_[A-Za-z0-9]{10,40}$/;

/** A field a signer fills: theirs, and not filled from a variable. */
export const fillable = (field: TemplateField, role: string) => field.role === role && !field.variable;

/**
 * The values a recipient submits, checked against their fields (api-decisions.md): each type's shape, required fields,
 * a required checkbox checked, consent given. Every problem at once, one pointer each.
 */
export function checkSubmission(fields: TemplateField[], role: string, input: { fields: Record<string, unknown>; consent: unknown }): Record<string, FieldValue> {
  const errors: FieldError[] = [];
  const mine = fields.filter((f) => fillable(f, role));
  const values: Record<string, FieldValue> = {};
  for (const id of Object.keys(input.fields)) {
    if (!mine.some((f) => f.id === id)) errors.push({ pointer: pointerTo('body', 'fields', id), detail: 'is not a field this recipient fills' });
  }
  for (const field of mine) {
    const given = input.fields[field.id];
    const pointer = `/body/fields/${field.id}`;
    if (given === undefined || given === null || given === '') {
      if (field.required) errors.push({ pointer, detail: `is required (${field.type})` });
      continue;
    }
    const checked = checkValue(field, given);
    if (typeof checked === 'string') errors.push({ pointer, detail: checked });
    else if (checked.value !== false || !field.required) values[field.id] = checked.value;
    else errors.push({ pointer, detail: 'must be checked' });
  }
  if (input.consent !== true) errors.push({ pointer: '/body/consent', detail: 'must be true: the signer agrees to sign electronically' });
  if (errors.length > 0) throw invalid(errors);
  return values;
}

/** The value as stored, or why it is refused. */
function checkValue(field: TemplateField, given: unknown): { value: FieldValue } | string {
  switch (field.type) {
    case 'signature':
    case 'initials':
      return signature(given);
    case 'text':
      return typeof given === 'string' && given.length <= 1000 ? { value: given } : 'must be text of at most 1000 characters';
    case 'date':
      return typeof given === 'string' && isDate(given) ? { value: given } : 'must be a date as YYYY-MM-DD';
    case 'checkbox':
      return typeof given === 'boolean' ? { value: given } : 'must be true or false';
    case 'attachment':
      return typeof given === 'string' && ATTACHMENT_ID.test(given) ? { value: given } : 'must be the id of an uploaded attachment (att_...)';
  }
}

function signature(given: unknown): { value: SignatureValue } | string {
  const value = given as { kind?: unknown; text?: unknown; image?: unknown } | null;
  if (value?.kind === 'typed') {
    return typeof value.text === 'string' && value.text.trim().length > 0 && value.text.length <= 200 ? { value: { kind: 'typed', text: value.text.trim() } } : 'a typed signature needs text of 1 to 200 characters';
  }
  if (value?.kind === 'drawn') {
    const match = typeof value.image === 'string' ? PNG_DATA_URL.exec(value.image) : null;
    const bytes = match ? Buffer.from(match[1] as string, 'base64') : undefined;
    if (!bytes || bytes.length > MAX_DRAWN_BYTES || !bytes.subarray(0, 8).equals(PNG_MAGIC)) return 'a drawn signature is a data:image/png;base64 URL of a PNG of at most 1 MiB';
    return { value: { kind: 'drawn', image: value.image as string } };
  }
  return 'must be { "kind": "typed", "text" } or { "kind": "drawn", "image": "data:image/png;base64,..." }';
}

function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

/** A value as events and webhooks carry it: a drawn image becomes the SHA-256 of its PNG. */
export function publicValue(value: unknown): unknown {
  const drawn = value as { kind?: unknown; image?: unknown } | null;
  if (drawn?.kind === 'drawn' && typeof drawn.image === 'string') {
    const base64 = drawn.image.slice(drawn.image.indexOf(',') + 1);
    return { kind: 'drawn', sha256: createHash('sha256').update(Buffer.from(base64, 'base64')).digest('hex') };
  }
  return value;
}
