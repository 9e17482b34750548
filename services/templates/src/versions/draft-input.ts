import { AppError, type FieldError } from '@sigil/kit/errors';
import { sanitizeBodyHtml } from '../files/body-html.ts';

/** SaveTemplateDraft (api-decisions.md), as checked and normalised. */
export interface DraftRole {
  name: string;
  order: number;
}
export interface DraftField {
  id: string;
  role: string;
  type: FieldType;
  required: boolean;
  page?: number;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  variable?: string;
}
export interface DraftVariable {
  name: string;
  required: boolean;
}
export interface DraftInput {
  file?: string;
  body?: { format: 'html'; content: string };
  roles: DraftRole[];
  fields: DraftField[];
  variables: DraftVariable[];
}

export const FIELD_TYPES = ['signature', 'initials', 'text', 'date', 'checkbox', 'attachment'] as const;
type FieldType = (typeof FIELD_TYPES)[number];

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/** `{{field:<id>}}` places a field in a document-mode body; `{{<name>}}` is a variable. */
export const FIELD_TAG = /\{\{\s*field:([A-Za-z][A-Za-z0-9_-]{0,63})\s*\}\}/g;
export const VARIABLE_TAG = /\{\{\s*([A-Za-z][A-Za-z0-9_-]{0,63})\s*\}\}/g;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks a SaveTemplateDraft body and returns it normalised (the body sanitized). Every problem is collected with a
 * pointer naming its member exactly (`/body/fields/3/role`), and all of them are answered at once.
 */
export function parseDraft(input: unknown): DraftInput {
  const errors: FieldError[] = [];
  const fail = (pointer: string, detail: string): void => void errors.push({ pointer: `/body${pointer}`, detail });
  const body = isObject(input) ? input : {};
  if (!isObject(input)) fail('', 'must be an object');

  const hasFile = body.file !== undefined && body.file !== null;
  const hasBody = body.body !== undefined && body.body !== null;
  if (hasFile === hasBody) fail('', 'must have exactly one of file or body');
  if (hasFile && (typeof body.file !== 'string' || !/^tfl_[A-Za-z0-9]{10,40}$/.test(body.file))) fail('/file', 'must be a template file id (tfl_...)');
  let draftBody: DraftInput['body'];
  if (hasBody) {
    const b = body.body;
    if (!isObject(b) || b.format !== 'html' || typeof b.content !== 'string') fail('/body', 'must be { "format": "html", "content": "<html>" }');
    else if (b.content.length > 2_000_000) fail('/body/content', 'must be at most 2,000,000 characters');
    else draftBody = { format: 'html', content: sanitizeBodyHtml(b.content) };
  }

  const list = (key: string): unknown[] => {
    const value = body[key] ?? [];
    if (!Array.isArray(value)) {
      fail(`/${key}`, 'must be an array');
      return [];
    }
    return value;
  };
  const roles: DraftRole[] = [];
  list('roles').forEach((role, i) => {
    if (!isObject(role) || typeof role.name !== 'string' || !NAME.test(role.name)) return fail(`/roles/${i}/name`, 'must be a name of letters, digits, _ and -');
    if (roles.some((r) => r.name === role.name)) return fail(`/roles/${i}/name`, `repeats role ${role.name}`);
    const order = role.order ?? 1;
    if (typeof order !== 'number' || !Number.isInteger(order) || order < 1) return fail(`/roles/${i}/order`, 'must be an integer of at least 1');
    roles.push({ name: role.name, order });
  });

  const variables: DraftVariable[] = [];
  list('variables').forEach((variable, i) => {
    if (!isObject(variable) || typeof variable.name !== 'string' || !NAME.test(variable.name)) return fail(`/variables/${i}/name`, 'must be a name of letters, digits, _ and -');
    if (variables.some((v) => v.name === variable.name)) return fail(`/variables/${i}/name`, `repeats variable ${variable.name}`);
    variables.push({ name: variable.name, required: variable.required === true });
  });

  const fields: DraftField[] = [];
  list('fields').forEach((field, i) => {
    const at = (member: string) => `/fields/${i}/${member}`;
    if (!isObject(field)) return fail(`/fields/${i}`, 'must be an object');
    if (typeof field.id !== 'string' || !NAME.test(field.id)) return fail(at('id'), 'must be a name of letters, digits, _ and -');
    if (fields.some((f) => f.id === field.id)) return fail(at('id'), `repeats field ${field.id}`);
    if (typeof field.role !== 'string' || !roles.some((r) => r.name === field.role)) {
      return fail(at('role'), `is not a role of this draft (${roles.map((r) => r.name).join(', ') || 'none'})`);
    }
    if (!FIELD_TYPES.includes(field.type as FieldType)) return fail(at('type'), `must be one of ${FIELD_TYPES.join(', ')}`);
    const parsed: DraftField = { id: field.id, role: field.role, type: field.type as FieldType, required: field.required !== false };
    for (const key of ['page', 'x', 'y', 'width', 'height'] as const) {
      const value = field[key];
      if (value === undefined) continue;
      const isPage = key === 'page';
      if (typeof value !== 'number' || !Number.isFinite(value) || value < (isPage ? 1 : 0) || (isPage && !Number.isInteger(value))) {
        return fail(at(key), isPage ? 'must be a page number (1-based)' : 'must be a number of PDF points, at least 0');
      }
      parsed[key] = value;
    }
    if (field.variable !== undefined) {
      if (parsed.type !== 'text') return fail(at('variable'), 'only a text field may be filled from a variable');
      if (typeof field.variable !== 'string' || !variables.some((v) => v.name === field.variable)) return fail(at('variable'), 'is not a declared variable');
      parsed.variable = field.variable;
    }
    fields.push(parsed);
  });

  if (draftBody) {
    const placed = new Set([...draftBody.content.matchAll(FIELD_TAG)].map((match) => match[1]));
    fields.forEach((field, i) => {
      if (!placed.has(field.id)) fail(`/fields/${i}`, `is not placed in the body: write {{field:${field.id}}} where it stands`);
    });
    for (const id of placed) {
      if (id && !fields.some((f) => f.id === id)) fail('/body/content', `places field ${id}, which the draft does not declare`);
    }
    for (const [, name] of draftBody.content.matchAll(VARIABLE_TAG)) {
      if (name && !variables.some((v) => v.name === name)) fail('/body/content', `uses variable ${name}, which the draft does not declare`);
    }
  }
  if (errors.length > 0) throw draftErrors(errors);
  return { ...(hasFile ? { file: body.file as string } : {}), ...(draftBody ? { body: draftBody } : {}), roles, fields, variables };
}

export function draftErrors(errors: FieldError[]): AppError {
  const first = errors[0] as FieldError;
  return new AppError('validation-failed', errors.length === 1 ? `${first.pointer}: ${first.detail}.` : `The draft has ${errors.length} problems.`, { errors });
}
