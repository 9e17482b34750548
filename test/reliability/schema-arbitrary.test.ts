import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAjv, loadSigilOpenApi } from '@sigil/proto';
import { loadStrataOpenApi } from '@sigil/proto/strata-openapi';
import { codePoints, createSchemaArbitraries, type Schema } from './schema-arbitrary.ts';
import { encodeWtf8, listOperationSpecs, requestArbitrary } from './fuzz-requests.ts';
import { curlOf } from './fuzz-client.ts';

/** The schema → arbitrary converter: what it calls valid, ajv accepts; what it calls hostile mostly breaks the schema. */
function validatorFor(root: object) {
  const ajv = createAjv({ strict: false });
  for (const format of ['int32', 'int64']) ajv.addFormat(format, () => true);
  ajv.addSchema(root, 'root');
  return (schema: Schema) => ajv.compile(typeof schema === 'boolean' ? schema : withRoot(schema));
}

/** A schema with `#/...` refs rewritten to the registered root. */
function withRoot(schema: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"root#/')) as Record<string, unknown>;
}

const samples = <T>(arbitrary: fc.Arbitrary<T>, numRuns = 100) => fc.sample(arbitrary, { numRuns, seed: 42 });

describe('schema → arbitrary', () => {
  const root = {
    components: {
      schemas: {
        Id: { type: 'string', pattern: '^tpl_[A-Za-z0-9]{10,40}$' },
        Base: { type: 'object', required: ['a'], properties: { a: { type: 'integer', minimum: 1, maximum: 5 } } },
        Mode: { type: 'string', enum: ['live', 'test'] },
      },
    },
  };
  const arbitraries = createSchemaArbitraries({ root });
  const compile = validatorFor(root);
  const cases: Record<string, Schema> = {
    'a $ref with a pattern': { $ref: '#/components/schemas/Id' },
    'an enum': { $ref: '#/components/schemas/Mode' },
    'a const': { const: 'invitation' },
    'bounded strings': { type: 'string', minLength: 3, maxLength: 5 },
    'an e-mail': { type: 'string', format: 'email', maxLength: 40 },
    'a date-time': { type: 'string', format: 'date-time' },
    'a uri with a pattern': { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 100 },
    'exclusive bounds': { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 10 },
    'a nullable number': { type: ['number', 'null'], minimum: -1, maximum: 1 },
    'unique bounded arrays': { type: 'array', items: { $ref: '#/components/schemas/Mode' }, uniqueItems: true, minItems: 1, maxItems: 2 },
    'a closed object': { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string', minLength: 1 }, mode: { $ref: '#/components/schemas/Mode' } } },
    'a map with property names': { type: 'object', minProperties: 1, maxProperties: 3, propertyNames: { pattern: '^[a-z]{1,8}$' }, additionalProperties: { type: 'string', maxLength: 4 } },
    'dependent members': { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, dependentRequired: { a: ['b'] } },
    allOf: { allOf: [{ $ref: '#/components/schemas/Base' }, { properties: { b: { type: 'boolean' } }, required: ['b'] }] },
    oneOf: { oneOf: [{ type: 'object', required: ['kind'], properties: { kind: { const: 'x' } } }, { type: 'array', minItems: 1, items: { type: 'object' } }] },
    anyOf: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', pattern: '^([1-9][0-9]{0,8}|latest|draft)$' }] },
    'a nullable string': { type: ['string', 'null'], format: 'date-time' },
  };

  for (const [name, schema] of Object.entries(cases)) {
    it(`generates only valid values for ${name}`, () => {
      const validate = compile(schema);
      for (const value of samples(arbitraries.validValue(schema))) expect(validate(value), `${JSON.stringify(value)}: ${JSON.stringify(validate.errors)}`).toBe(true);
    });
  }

  it('generates hostile values that a strict schema mostly refuses', () => {
    for (const name of ['a $ref with a pattern', 'bounded strings', 'exclusive bounds', 'a closed object', 'an enum']) {
      const validate = compile(cases[name]!);
      const refused = samples(arbitraries.hostileValue(cases[name]!), 200).filter((v) => !validate(v)).length;
      expect(refused, name).toBeGreaterThan(150);
    }
  });

  it('reaches the edges: missing required members, unknown members, huge and odd strings', () => {
    const hostile = samples(arbitraries.hostileValue(cases['a closed object']!), 500);
    const objects = hostile.filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v));
    expect(objects.some((o) => !('name' in o))).toBe(true);
    expect(objects.some((o) => Object.keys(o).some((k) => !['name', 'mode'].includes(k)))).toBe(true);
    const strings = samples(arbitraries.hostileValue({ type: 'string', maxLength: 10 }), 500).filter((v): v is string => typeof v === 'string');
    expect(strings.some((s) => s.length >= 10_000)).toBe(true);
    expect(strings.some((s) => /[\uD800-\uDFFF]/.test(s) && codePoints(s) >= 1)).toBe(true);
    expect(strings.some((s) => s.includes('\u0000'))).toBe(true);
    expect(strings.some((s) => s.includes('\u202E'))).toBe(true);
  });

  it('counts code points as JSON Schema does', () => {
    expect(codePoints('😀a')).toBe(2);
    expect(codePoints('\uD800')).toBe(1);
  });

  it('refuses what it does not know rather than generating nonsense', () => {
    expect(() => arbitraries.validValue({ $ref: '#/components/schemas/Missing' })).toThrow(/points nowhere/);
    expect(() => arbitraries.validValue({ type: 'tuple' })).toThrow(/unknown type/);
  });
});

describe('the contracts', () => {
  for (const [product, doc] of [['sigil', loadSigilOpenApi()], ['strata', loadStrataOpenApi()]] as const) {
    it(`${product}: every parameter and request body schema yields values the schema accepts`, () => {
      const root = doc as unknown as Record<string, unknown>;
      const arbitraries = createSchemaArbitraries({ root });
      const compile = validatorFor(root);
      const specs = listOperationSpecs(root, product, '');
      let schemas = 0;
      for (const spec of specs) {
        const all = [...spec.parameters.map((p) => [`${p.in} ${p.name}`, p.schema] as const), ...Object.entries(spec.body?.content ?? {}).filter(([type]) => type.includes('json')).map(([type, schema]) => [`body ${type}`, schema] as const)];
        for (const [where, schema] of all) {
          schemas++;
          const validate = compile(schema);
          for (const value of samples(arbitraries.validValue(schema), 25)) {
            expect(validate(value), `${spec.operationId} ${where}: ${JSON.stringify(value)} ${JSON.stringify(validate.errors)}`).toBe(true);
          }
        }
      }
      expect(schemas).toBeGreaterThan(specs.length);
    });

    it(`${product}: every operation gets requests on its own path and method, with its credential`, () => {
      const root = doc as unknown as Record<string, unknown>;
      for (const spec of listOperationSpecs(root, product, '/p')) {
        const requests = samples(requestArbitrary(spec, root, { credential: { authorization: 'Bearer secret-token' }, real: { id: ['real_id'] } }), 20);
        for (const request of requests) {
          expect(request.method).toBe(spec.method);
          expect(request.url.startsWith('/p/')).toBe(true);
          expect(request.headers.authorization).toBe('Bearer secret-token');
        }
        expect(requests.some((r) => r.shape === 'hostile') || (spec.parameters.length === 0 && !spec.body)).toBe(true);
      }
    });
  }
});

describe('requests on the wire', () => {
  it('percent-encodes lone surrogates as WTF-8 instead of throwing', () => {
    expect(encodeWtf8('a/\uD800')).toBe('a%2F%ED%A0%80');
    expect(encodeWtf8('é😀')).toBe('%C3%A9%F0%9F%98%80');
  });

  it('prints a curl line with secrets replaced by placeholders and exact bytes', () => {
    const line = curlOf('http://127.0.0.1:1', { method: 'POST', url: "/v1/x/..%2F?q=it's", headers: { authorization: 'Bearer sgl_test_secret', 'content-type': 'application/json' }, body: '{"a":"\u0000é"}', shape: 'hostile' }, { $API_KEY: 'sgl_test_secret' });
    expect(line).toBe(`curl -sS --path-as-is -X POST 'http://127.0.0.1:1/v1/x/..%2F?q=it'\\''s' -H 'authorization: Bearer '"$API_KEY" -H 'content-type: application/json' --data-binary $'{"a":"\\x00\\xc3\\xa9"}'`);
  });
});
