import fc from 'fast-check';
import { createSchemaArbitraries, ODD_STRINGS, type Schema } from './schema-arbitrary.ts';

/**
 * Requests for one operation of an OpenAPI document, generated from its parameters and request body: valid ones
 * (real ids mixed in) and hostile ones (wrong types, missing members, huge and odd strings, wrong content types,
 * malformed JSON, path and query edge cases). The credential the caller passes is always sent: the fuzz is about what
 * a legitimate caller can send, not about authentication (the authorization matrix covers that).
 */
export interface FuzzRequest {
  method: string;
  /** Path and query as they go on the wire (already encoded; `..` and `%2F` kept raw). */
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** What kind of case this is, for the summary. */
  shape: 'valid' | 'hostile';
}

type Node = Record<string, unknown>;

export interface ParameterSpec {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
}

export interface OperationSpec {
  product: 'sigil' | 'strata';
  operationId: string;
  method: string;
  /** The path template relative to the document. */
  path: string;
  /** Where the document's paths are mounted on the gateway ('' or '/api/v1'). */
  prefix: string;
  parameters: ParameterSpec[];
  body?: { required: boolean; content: Record<string, Schema> };
  operation: Node;
}

export interface RequestContext {
  /** Headers that authenticate the caller for this operation. */
  credential: Record<string, string>;
  /** Real values by parameter name (ids of seeded resources, a real access token), mixed into the generated ones. */
  real: Record<string, readonly string[]>;
  /** Real request bodies (JSON values) mixed into the generated ones. */
  realBodies?: readonly unknown[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Every operation of a document with its parameters (path-level ones too) and body resolved. */
export function listOperationSpecs(doc: Node, product: OperationSpec['product'], prefix: string): OperationSpec[] {
  const specs: OperationSpec[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Node>)) {
    for (const method of METHODS) {
      const operation = item[method] as Node | undefined;
      if (!operation) continue;
      const declared = [...((item.parameters ?? []) as Node[]), ...((operation.parameters ?? []) as Node[])].map((p) => deref(doc, p));
      const parameters: ParameterSpec[] = declared.map((p) => ({ name: String(p.name), in: p.in as ParameterSpec['in'], required: p.required === true, schema: (p.schema ?? true) as Schema }));
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        if (!parameters.some((p) => p.in === 'path' && p.name === name)) parameters.push({ name: name!, in: 'path', required: true, schema: { type: 'string', minLength: 1 } });
      }
      const requestBody = operation.requestBody ? deref(doc, operation.requestBody as Node) : undefined;
      const body = requestBody
        ? { required: requestBody.required === true, content: Object.fromEntries(Object.entries((requestBody.content ?? {}) as Record<string, Node>).map(([type, media]) => [type, (media.schema ?? true) as Schema])) }
        : undefined;
      specs.push({ product, operationId: String(operation.operationId), method: method.toUpperCase(), path, prefix, parameters, body, operation });
    }
  }
  return specs;
}

/** Path segments a router, a proxy or a file server may mishandle: dot segments, encoded slashes, bad escapes, length. */
export const HOSTILE_SEGMENTS: readonly string[] = [
  '..', '.', '%2e%2e', '%2E', '%2F', 'a%2Fb', '..%2F..%2Fetc%2Fpasswd', '%5C', '%00', '%', '%zz', '%C0%AF', '%ED%A0%80', '%E2%80%AE', '%EF%BB%BF',
  '%20', '%3F', '%23', ';', ';a=b', '~', '*', "'", '%252F', '%27%20OR%201%3D1', 'x'.repeat(2_000), '0'.repeat(300), '-1', '1e9', 'null', 'NaN',
];

const MALFORMED_JSON: readonly string[] = [
  '{', '}', '{"a":', '[1,]', 'nul', '{"a":1}}', '"unterminated', "{'a':1}", '{"a":1,"a":2}', '\u0000', '\uFEFF{}', '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"x":1}}}', '[]', '0', '"x"', 'null', 'true', '1e999', `${'['.repeat(5_000)}${']'.repeat(5_000)}`, `${'{"a":'.repeat(2_000)}1${'}'.repeat(2_000)}`,
];

const WRONG_TYPES = ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=zz', 'application/octet-stream', 'application/json; charset=utf-16', 'APPLICATION/JSON', 'application/merge-patch+json', 'image/png', ';', 'application/'];

export function requestArbitrary(spec: OperationSpec, doc: Node, ctx: RequestContext): fc.Arbitrary<FuzzRequest> {
  const schemas = createSchemaArbitraries({ root: doc });
  const stringOf = (value: unknown): string => (typeof value === 'string' ? value : value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value));
  const realOr = (name: string, generated: fc.Arbitrary<string>, weight = 3): fc.Arbitrary<string> => {
    const real = ctx.real[name] ?? [];
    return real.length ? fc.oneof({ weight, arbitrary: fc.constantFrom(...real) }, { weight: 3, arbitrary: generated }) : generated;
  };

  const pathParams = spec.parameters.filter((p) => p.in === 'path');
  const segments = fc.tuple(
    ...pathParams.map((p) =>
      realOr(
        p.name,
        fc.oneof(
          { weight: 4, arbitrary: schemas.validValue(p.schema).map((v) => encodeWtf8(clip(stringOf(v)))) },
          { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
          { weight: 1, arbitrary: schemas.hostileValue(p.schema).map((v) => encodeWtf8(clip(stringOf(v))) || 'x') },
        ),
        5,
      ).map((value) => (ctx.real[p.name]?.includes(value) ? encodeURIComponent(value) : value)),
    ),
  );

  const queryParams = spec.parameters.filter((p) => p.in === 'query');
  const queryValue = (p: ParameterSpec): fc.Arbitrary<string[]> =>
    fc.oneof(
      { weight: 4, arbitrary: schemas.validValue(p.schema).map((v) => (Array.isArray(v) ? v.map(stringOf) : [stringOf(v)]).map(clip)) },
      { weight: 2, arbitrary: schemas.hostileValue(p.schema).map((v) => [clip(stringOf(v))]) },
      // Repeated: `?limit=1&limit=2` (a framework may hand the handler an array where it expects a string).
      { weight: 1, arbitrary: fc.array(schemas.validValue(p.schema).map((v) => clip(stringOf(v))), { minLength: 2, maxLength: 3 }) },
      ...(ctx.real[p.name]?.length ? [{ weight: 3, arbitrary: fc.constantFrom(...ctx.real[p.name]!).map((v) => [v]) }] : []),
    );
  const query = fc
    .tuple(
      fc.tuple(...queryParams.map((p) => (p.required ? queryValue(p) : fc.option(queryValue(p), { freq: 2 })))),
      fc.option(fc.tuple(fc.constantFrom('unknown', '', 'limit[]', 'a%00', '__proto__', 'x'.repeat(1_000)), fc.constantFrom('1', '', '%', 'x'.repeat(2_000))), { freq: 4 }),
      fc.option(fc.nat(Math.max(queryParams.length - 1, 0)), { freq: 6 }),
    )
    .map(([values, extra, dropRequired]) => {
      const pairs: string[] = [];
      values.forEach((list, i) => {
        const p = queryParams[i]!;
        // A required parameter is sometimes left out.
        if (list === null || (p.required && dropRequired === i)) return;
        for (const item of list) pairs.push(`${encodeURIComponent(p.name)}=${encodeWtf8(item)}`);
      });
      if (extra) pairs.push(`${extra[0]}=${extra[1]}`);
      return pairs.length ? `?${pairs.join('&')}` : '';
    });

  const headerParams = spec.parameters.filter((p) => p.in === 'header' && p.name.toLowerCase() !== 'x-request-id');
  const headers = fc.tuple(
    fc.tuple(
      ...headerParams.map((p) =>
        fc.option(
          fc.oneof(schemas.validValue(p.schema).map(stringOf), fc.constantFrom('', ' ', 'x'.repeat(300), 'é', '\t', 'a b', '\x7f', '-1', '99999999999999999999')).filter(isHeaderValue),
          { freq: 2 },
        ),
      ),
    ),
    fc.option(fc.constantFrom('short', 'x'.repeat(200), '../..', 'req_ok-id.1234', '\t'), { freq: 5 }),
  );

  const body = spec.body ? bodyArbitrary(spec.body, schemas, ctx.realBodies ?? []) : fc.constant(undefined);
  // A stray body on an operation that takes none.
  const strayBody = fc.option(fc.constantFrom<{ type: string; bytes: string }>({ type: 'application/json', bytes: '{"a":1}' }, { type: 'text/plain', bytes: 'hello' }), { freq: 12 });

  return fc.tuple(segments, query, headers, body, strayBody).map(([values, search, [headerValues, requestId], chosen, stray]) => {
    let i = 0;
    const path = spec.path.replace(/\{[^}]+\}/g, () => values[i++] as string);
    const sent: Record<string, string> = { ...ctx.credential };
    headerParams.forEach((p, n) => {
      const value = headerValues[n];
      if (value !== null && value !== undefined) sent[p.name] = value;
    });
    if (requestId) sent['x-request-id'] = requestId;
    const payload = chosen ?? (stray ? { type: stray.type, bytes: stray.bytes, shape: 'hostile' as const } : undefined);
    if (payload?.type) sent['content-type'] = payload.type;
    return {
      method: spec.method,
      url: `${spec.prefix}${path}${search}`,
      headers: sent,
      body: payload?.bytes,
      shape: payload?.shape === 'hostile' || values.some((v) => HOSTILE_SEGMENTS.includes(v)) ? 'hostile' : 'valid',
    };
  });
}

interface ChosenBody {
  type?: string;
  bytes?: string | Uint8Array;
  shape: FuzzRequest['shape'];
}

function bodyArbitrary(body: NonNullable<OperationSpec['body']>, schemas: ReturnType<typeof createSchemaArbitraries>, realBodies: readonly unknown[]): fc.Arbitrary<ChosenBody | undefined> {
  const choices: Array<fc.WeightedArbitrary<ChosenBody | undefined>> = [];
  const json = (value: unknown) => JSON.stringify(value) ?? 'null';
  for (const [type, schema] of Object.entries(body.content)) {
    if (type === 'application/json' || type.endsWith('+json')) {
      choices.push({ weight: 8, arbitrary: schemas.validValue(schema).map((v) => ({ type, bytes: json(v), shape: 'valid' as const })) });
      choices.push({ weight: 6, arbitrary: schemas.hostileValue(schema).map((v) => ({ type, bytes: json(v), shape: 'hostile' as const })) });
      choices.push({ weight: 1, arbitrary: fc.constantFrom(...MALFORMED_JSON).map((bytes) => ({ type, bytes, shape: 'hostile' as const })) });
      if (realBodies.length) choices.push({ weight: 3, arbitrary: fc.constantFrom(...realBodies).map((v) => ({ type, bytes: json(v), shape: 'valid' as const })) });
      choices.push({ weight: 1, arbitrary: fc.tuple(fc.constantFrom(...WRONG_TYPES), schemas.validValue(schema)).map(([wrong, v]) => ({ type: wrong, bytes: json(v), shape: 'hostile' as const })) });
    } else if (type === 'application/x-www-form-urlencoded') {
      choices.push({ weight: 6, arbitrary: schemas.validValue(schema).map((v) => ({ type, bytes: formOf(v), shape: 'valid' as const })) });
      choices.push({ weight: 4, arbitrary: schemas.hostileValue(schema).map((v) => ({ type, bytes: formOf(v), shape: 'hostile' as const })) });
      choices.push({ weight: 1, arbitrary: fc.constantFrom('SAMLResponse=%zz', 'a=1&a=2', '=', '&&&', 'SAMLResponse=' + 'A'.repeat(100_000)).map((bytes) => ({ type, bytes, shape: 'hostile' as const })) });
    } else if (type === 'multipart/form-data') {
      choices.push({ weight: 8, arbitrary: multipartArbitrary(schema, schemas) });
      choices.push({ weight: 1, arbitrary: fc.constantFrom('--zz\r\nbroken', '', '--zz--\r\n').map((bytes) => ({ type: 'multipart/form-data; boundary=zz', bytes, shape: 'hostile' as const })) });
      choices.push({ weight: 1, arbitrary: fc.constant({ type: 'multipart/form-data', bytes: 'no boundary', shape: 'hostile' as const }) });
    } else if (type === 'application/yaml') {
      choices.push({ weight: 2, arbitrary: fc.constantFrom('a: [', 'kind: List\nitems: 1', '- 1\n- 2', 'x: &a [*a]', '!!js/function "f"', 'a: 1\na: 2', '---\n---\n', '\t- x', 'apiVersion: v1\nkind: Secret\nmetadata: {name: "../x"}').map((bytes) => ({ type, bytes, shape: 'hostile' as const })) });
      choices.push({ weight: 1, arbitrary: fc.string({ maxLength: 200, unit: 'binary' }).map((bytes) => ({ type, bytes, shape: 'hostile' as const })) });
    } else {
      // Files: a few real-looking headers, random bytes, and the wrong type.
      choices.push({ weight: 4, arbitrary: fc.tuple(fc.constantFrom('%PDF-1.7\n', 'PK\u0003\u0004', '{\\rtf1 ', '\u00d0\u00cf\u0011\u00e0', ''), fc.uint8Array({ maxLength: 2_000 })).map(([head, rest]) => ({ type, bytes: concat(head, rest), shape: 'hostile' as const })) });
      choices.push({ weight: 1, arbitrary: fc.constant({ type, bytes: new Uint8Array(0), shape: 'hostile' as const }) });
    }
  }
  choices.push({ weight: 1, arbitrary: fc.constant(undefined) });
  choices.push({ weight: 1, arbitrary: fc.constant({ type: Object.keys(body.content)[0]!, bytes: '', shape: 'hostile' as const }) });
  return fc.oneof(...choices);
}

function multipartArbitrary(schema: Schema, schemas: ReturnType<typeof createSchemaArbitraries>): fc.Arbitrary<ChosenBody> {
  const resolved = schemas.resolve(schema);
  const names = typeof resolved === 'object' ? Object.keys((resolved.properties ?? {}) as Node) : [];
  return fc
    .tuple(
      fc.constantFrom(...(names.length ? names : ['file']), 'other', ''),
      fc.constantFrom('logo.png', 'a.pdf', '../../etc/passwd', 'x'.repeat(1_000), 'évil\u202Egnp.exe', ''),
      fc.constantFrom('image/png', 'image/jpeg', 'image/svg+xml', 'application/pdf', 'text/html', 'application/octet-stream'),
      fc.tuple(fc.constantFrom('\u0089PNG\r\n\u001a\n', '\u00ff\u00d8\u00ff', '<svg onload=alert(1)>', '%PDF-1.4\n', ''), fc.uint8Array({ maxLength: 1_500 })),
      fc.boolean(),
    )
    .map(([field, filename, type, [head, rest], twice]) => {
      const boundary = 'fuzzboundary7MA4YWxkTrZu0gW';
      const part = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;
      const file = concat(head, rest);
      const one = [Buffer.from(part, 'latin1'), Buffer.from(file), Buffer.from('\r\n')];
      return { type: `multipart/form-data; boundary=${boundary}`, bytes: new Uint8Array(Buffer.concat([...one, ...(twice ? one : []), Buffer.from(`--${boundary}--\r\n`)])), shape: 'hostile' as const };
    });
}

function formOf(value: unknown): string {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return encodeWtf8(String(JSON.stringify(value)));
  return Object.entries(value as Node)
    .map(([k, v]) => `${encodeWtf8(k)}=${encodeWtf8(typeof v === 'string' ? v : JSON.stringify(v) ?? '')}`)
    .join('&');
}

function concat(head: string, rest: Uint8Array): Uint8Array {
  return new Uint8Array(Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(rest)]));
}

/**
 * Path and query values are cut to 1,000 characters: a request line over Node's 16 KiB header limit is answered 431 by
 * the HTTP parser before any of our code runs (a transport limit, like a reset connection, not an answer of the API).
 */
function clip(value: string): string {
  return value.length > 1_000 ? value.slice(0, 1_000) : value;
}

/** Percent-encodes every code point as UTF-8, lone surrogates as the three bytes WTF-8 gives them (encodeURIComponent throws). */
export function encodeWtf8(value: string): string {
  if (value.isWellFormed()) return encodeURIComponent(value);
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

/** What undici (and HTTP) lets through as a header value: Latin-1, no control characters but tab. */
function isHeaderValue(value: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value) && value.trim() === value;
}

function deref(doc: Node, value: Node): Node {
  let node = value;
  for (let hops = 0; typeof node.$ref === 'string' && hops < 16; hops++) {
    node = String(node.$ref)
      .slice(2)
      .split('/')
      .reduce<Node>((at, key) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')] as Node, doc);
  }
  return node;
}

export { ODD_STRINGS };
