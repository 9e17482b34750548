import type { Response } from 'express';
import { OpenAPIBackend } from 'openapi-backend';
import { JSON_SCHEMA_FORMATS } from '@sigil/proto/ajv';

/** What a handler answers: stored for idempotent replays, or written as is. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * openapi-backend for one of our OpenAPI 3.1 documents: requests validated (types coerced), unknown
 * keywords refused, with the formats proto's schemas use. The documents themselves are validated by
 * proto's tests; openapi-backend's own check only knows OpenAPI 3.0, hence `quick`.
 */
export function createOpenApiBackend(definition: Record<string, unknown>): OpenAPIBackend {
  return new OpenAPIBackend({
    definition: definition as never,
    validate: true,
    coerceTypes: true,
    quick: true,
    strict: true,
    customizeAjv: (ajv) => {
      for (const [name, format] of Object.entries(JSON_SCHEMA_FORMATS)) ajv.addFormat(name, format);
      ajv.addFormat('int64', { type: 'number', validate: Number.isSafeInteger });
      ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
      return ajv;
    },
  });
}

/** Writes a reply: no body for 204 or an empty one, strings as they are, anything else as JSON. */
export function sendReply(res: Response, reply: Reply): void {
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  if (reply.status === 204 || reply.body === undefined || reply.body === null) {
    res.status(reply.status).end();
    return;
  }
  if (typeof reply.body === 'string') {
    res.status(reply.status).send(reply.body);
    return;
  }
  res.status(reply.status).json(reply.body);
}
