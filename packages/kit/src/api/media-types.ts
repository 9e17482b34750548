import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors.ts';

/** What an operation accepts as its request body, read from the document. */
export interface BodyRule {
  mediaTypes: string[];
  required: boolean;
}

type Node = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

/** operationId → body rule, for every operation of the document that declares a request body. */
export function bodyRules(document: Node): Map<string, BodyRule> {
  const rules = new Map<string, BodyRule>();
  for (const item of Object.values((document.paths ?? {}) as Record<string, Node>)) {
    for (const method of METHODS) {
      const operation = item[method] as Node | undefined;
      if (!operation || typeof operation.operationId !== 'string') continue;
      const body = resolve(document, operation.requestBody) as Node | undefined;
      if (!body) continue;
      rules.set(operation.operationId, {
        mediaTypes: Object.keys((body.content ?? {}) as Node).map((type) => type.toLowerCase()),
        required: body.required === true,
      });
    }
  }
  return rules;
}

function resolve(document: Node, value: unknown): unknown {
  let node = value;
  for (let depth = 0; depth < 8 && node && typeof node === 'object' && '$ref' in node; depth++) {
    const ref = String((node as { $ref: unknown }).$ref);
    node = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((at, key) => (at && typeof at === 'object' ? (at as Node)[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), document);
  }
  return node;
}

/** Whether the request carries a body at all (a length, or a chunked transfer). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return req.headers['transfer-encoding'] !== undefined;
}

export function mediaTypeOf(req: IncomingMessage): string | undefined {
  return req.headers['content-type']?.split(';')[0]?.trim().toLowerCase() || undefined;
}

/**
 * 415 when a body comes in a type the operation does not take (or with no type at all), 400 when a required body is
 * missing. Checked before validation, so the caller learns the real problem rather than a missing `requestBody`.
 */
export function checkBody(req: IncomingMessage, rule: BodyRule | undefined): void {
  const type = mediaTypeOf(req);
  if (!rule) return;
  const accepted = rule.mediaTypes.join(', ');
  if (!hasBody(req) && type === undefined) {
    if (!rule.required) return;
    throw new AppError('validation-failed', `The request body is required (Content-Type: ${accepted}).`, {
      errors: [{ pointer: '/body', detail: 'is required' }],
    });
  }
  if (type === undefined || !rule.mediaTypes.includes(type)) {
    const got = type === undefined ? 'no Content-Type' : `Content-Type ${type}`;
    throw new AppError('unsupported-media-type', `This operation takes a body of type ${accepted}; the request has ${got}.`);
  }
}
