import fc from 'fast-check';

/**
 * JSON Schema (the 2020-12 subset our OpenAPI 3.1 contracts use) → fast-check arbitraries: `validValue` generates
 * values the schema accepts, `hostileValue` values that break it (wrong types, missing members, unknown members, too
 * long, out of range, off-pattern) or sit at its edges (odd Unicode). fast-check has no maintained JSON Schema
 * generator; this one knows $ref, type (with nullable unions), properties/required/additionalProperties,
 * propertyNames, min/maxProperties, dependentRequired, enum/const, the contracts' formats, min/maxLength, pattern,
 * minimum/maximum (exclusive too), items/minItems/maxItems/uniqueItems, oneOf/anyOf/allOf.
 */
export type Schema = Record<string, unknown> | boolean;
type Node = Record<string, unknown>;

export interface SchemaArbitraryOptions {
  /** The document `$ref`s point into (`#/components/...`). */
  root: object;
  /** Strings for a format, overriding the built-in ones (the fuzz run keeps every URL on loopback). */
  formats?: Record<string, fc.Arbitrary<string>>;
  /** How deep nested objects and arrays go before only required members are generated. */
  maxDepth?: number;
}

/** Hostile strings: control characters, NUL, lone surrogates, direction marks, zero-width, non-BMP, normalisation traps. */
export const ODD_STRINGS: readonly string[] = [
  '', ' ', '\u0000', 'a\u0000b', '\uD800', 'x\uDC00y', '\u202Eevil\u202C', '\u200F\u200E', '\u200B\uFEFF', '😀👩‍👩‍👧', 'e\u0301',
  'İı', '\r\n', '\t', '%00', '%', '../..', '\\', '"', "'; DROP TABLE x; --", '<script>', '${x}', '{{x}}', 'null', 'true', '0', '-1',
  '1e309', 'NaN', '\u0085', '\u2028', '\uFFFF', '\u{10FFFF}',
];

const NOT_NULL_TYPES = ['string', 'integer', 'number', 'boolean', 'object', 'array'] as const;

export function createSchemaArbitraries(options: SchemaArbitraryOptions) {
  const maxDepth = options.maxDepth ?? 4;
  const formats: Record<string, fc.Arbitrary<string>> = { ...builtInFormats(), ...options.formats };

  function resolve(schema: Schema): Schema {
    let node: Schema = schema;
    for (let hops = 0; typeof node === 'object' && typeof node.$ref === 'string'; hops++) {
      if (hops > 32) throw new Error(`$ref loop at ${String(node.$ref)}`);
      const { $ref, ...rest } = node;
      const target = pointer(options.root, $ref as string);
      // Keywords beside a $ref apply too (2020-12): merged over the target.
      node = Object.keys(rest).length ? mergeAll([target, rest]) : target;
    }
    if (typeof node === 'object' && Array.isArray(node.allOf)) {
      const { allOf, ...rest } = node;
      node = mergeAll([...(allOf as Schema[]).map(resolve), rest]);
    }
    return node;
  }

  function typesOf(schema: Node): string[] {
    if (Array.isArray(schema.type)) return schema.type as string[];
    if (typeof schema.type === 'string') return [schema.type];
    if (schema.properties || schema.additionalProperties !== undefined || schema.required) return ['object'];
    if (schema.items) return ['array'];
    if (schema.pattern || schema.format || schema.maxLength !== undefined) return ['string'];
    return [];
  }

  function validValue(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const s = resolve(schema);
    if (s === true) return fc.jsonValue({ maxDepth: 1 });
    if (s === false) throw new Error('no value satisfies the schema `false`');
    if ('const' in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    const branches = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
    if (branches) {
      const { oneOf: _o, anyOf: _a, ...rest } = s;
      return fc.oneof(...branches.map((b) => validValue(mergeAll([rest, resolve(b)]), depth)));
    }
    const types = typesOf(s);
    if (types.length === 0) return fc.jsonValue({ maxDepth: 1 });
    return fc.oneof(...types.map((type) => ofType(type, s, depth)));
  }

  function ofType(type: string, s: Node, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer(integerBounds(s));
      case 'number':
        return numberOf(s);
      case 'string':
        return stringOf(s);
      case 'array':
        return arrayOf(s, depth);
      case 'object':
        return objectOf(s, depth);
      default:
        throw new Error(`unknown type ${type}`);
    }
  }

  function stringOf(s: Node): fc.Arbitrary<string> {
    const minLength = num(s.minLength) ?? 0;
    const maxLength = num(s.maxLength) ?? Infinity;
    const fits = (v: string) => codePoints(v) >= minLength && codePoints(v) <= maxLength;
    const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : undefined;
    // A format first (URLs stay on loopback even where a pattern allows more), then the pattern.
    if (typeof s.format === 'string' && formats[s.format]) return formats[s.format]!.filter((v) => fits(v) && (!pattern || pattern.test(v)));
    if (pattern) return fc.stringMatching(new RegExp(s.pattern as string), { maxLength: Math.min(maxLength, 300) }).filter(fits);
    const max = Math.min(maxLength, minLength + 40);
    return fc.oneof(
      { weight: 4, arbitrary: fc.string({ minLength, maxLength: max }) },
      { weight: 1, arbitrary: fc.string({ minLength, maxLength: max, unit: 'binary' }) },
      { weight: 1, arbitrary: fc.string({ minLength, maxLength: max, unit: fc.constantFrom(...ODD_STRINGS.filter((o) => codePoints(o) === 1)) }) },
    );
  }

  function arrayOf(s: Node, depth: number): fc.Arbitrary<unknown[]> {
    const minLength = num(s.minItems) ?? 0;
    const maxLength = Math.min(num(s.maxItems) ?? Infinity, depth >= maxDepth ? minLength : minLength + 3);
    const items = s.items === undefined ? fc.jsonValue({ maxDepth: 1 }) : validValue(s.items as Schema, depth + 1);
    if (s.uniqueItems === true) return fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) });
    return fc.array(items, { minLength, maxLength });
  }

  function objectOf(s: Node, depth: number): fc.Arbitrary<Node> {
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    const required = new Set((s.required ?? []) as string[]);
    const deep = depth >= maxDepth;
    const known = Object.keys(properties).filter((name) => !deep || required.has(name));
    const record = fc.record(Object.fromEntries(known.map((name) => [name, validValue(properties[name]!, depth + 1)])), {
      requiredKeys: known.filter((name) => required.has(name)),
    });
    const additional = s.additionalProperties;
    // Only free-form maps get extra members: a closed object (or a known one) keeps to its properties.
    const extra =
      additional === false || (additional === undefined && known.length > 0) || deep
        ? fc.constant({})
        : fc.dictionary(
            s.propertyNames ? (validValue(s.propertyNames as Schema, depth + 1) as fc.Arbitrary<string>) : fc.string({ minLength: 1, maxLength: 12 }),
            additional === undefined || additional === true ? fc.jsonValue({ maxDepth: 1 }) : validValue(additional as Schema, depth + 1),
            { maxKeys: 3 },
          );
    const minProperties = num(s.minProperties) ?? 0;
    const maxProperties = num(s.maxProperties) ?? Infinity;
    const dependent = (s.dependentRequired ?? {}) as Record<string, string[]>;
    return fc
      .tuple(record, extra)
      .map(([fixed, more]) => ({ ...Object.fromEntries(Object.entries(more).filter(([k]) => !(k in properties))), ...fixed }) as Node)
      .filter((o) => {
        const count = Object.keys(o).length;
        if (count < minProperties || count > maxProperties) return false;
        return Object.entries(dependent).every(([name, needs]) => !(name in o) || needs.every((n) => n in o));
      });
  }

  /** A value that breaks the schema somewhere (or sits on its edge): what a careless or hostile client sends. */
  function hostileValue(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const s = resolve(schema);
    if (typeof s === 'boolean') return anyJson();
    const types = typesOf(s);
    const choices: Array<fc.WeightedArbitrary<unknown>> = [
      { weight: 2, arbitrary: anyJson().filter((v) => !types.includes(jsonType(v)) && !(types.includes('number') && jsonType(v) === 'integer')) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(...ODD_STRINGS, -1, 0, 2 ** 53, -(2 ** 63), 1.5, 1e308, [], {}, null, true) },
    ];
    if (Array.isArray(s.enum) || 'const' in s) choices.push({ weight: 3, arbitrary: fc.constantFrom<unknown>('', 'unknown', 'UPPER', ' x', ...ODD_STRINGS.slice(0, 8)) });
    if (types.includes('string')) choices.push({ weight: 3, arbitrary: hostileString(s) });
    if (types.includes('integer') || types.includes('number')) choices.push({ weight: 3, arbitrary: hostileNumber(s) });
    if (types.includes('array') && depth < maxDepth) {
      const items = (s.items ?? true) as Schema;
      const max = num(s.maxItems);
      choices.push({ weight: 3, arbitrary: fc.array(fc.oneof(validValue(items, depth + 1), hostileValue(items, depth + 1)), { minLength: 1, maxLength: 4 }) });
      if (max !== undefined && max < 1000) choices.push({ weight: 1, arbitrary: fc.array(validValue(items, maxDepth), { minLength: max + 1, maxLength: max + 2 }) });
    }
    if (types.includes('object') && depth < maxDepth) choices.push({ weight: 6, arbitrary: hostileObject(s, depth) });
    return fc.oneof(...choices);
  }

  function hostileString(s: Node): fc.Arbitrary<string> {
    const max = num(s.maxLength);
    return fc.oneof(
      fc.constantFrom(...ODD_STRINGS),
      fc.string({ maxLength: 30, unit: fc.constantFrom('\u0000', '\uD800', '\uDFFF', '\u202E', '\u200B', '/', '%', '\\', 'ß', '€', '😀', 'a') }),
      // Huge: past any maxLength, and large enough to hurt a careless parser or database column.
      fc.constantFrom(...[max === undefined ? 300 : max + 1, 10_000, 100_000].map((n) => 'x'.repeat(n))),
      typeof s.pattern === 'string'
        ? fc.string({ minLength: 1, maxLength: 20 }).filter((v) => !new RegExp(s.pattern as string, 'u').test(v))
        : fc.constant('x'.repeat(Math.max((num(s.minLength) ?? 0) - 1, 0))),
    );
  }

  function hostileNumber(s: Node): fc.Arbitrary<unknown> {
    const { min, max } = integerBounds(s);
    return fc.constantFrom<unknown>(min - 1, max + 1, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_VALUE, 0.5, -0, '12', '1e3', 'NaN', 'Infinity');
  }

  function hostileObject(s: Node, depth: number): fc.Arbitrary<unknown> {
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    const names = Object.keys(properties);
    const required = (s.required ?? []) as string[];
    const base = objectOf(s, depth);
    const mutations: Array<fc.Arbitrary<unknown>> = [
      // An unknown member (refused by closed objects, ignored or kept by open ones).
      base.chain((o) => fc.tuple(fc.constantFrom('__proto__', 'constructor', 'unknownMember', '', '\u0000', 'a'.repeat(300)), anyJson()).map(([k, v]) => ({ ...o, [k]: v }))),
    ];
    if (required.length) mutations.push(base.chain((o) => fc.constantFrom(...required).map((k) => omit(o, k))));
    if (names.length) {
      mutations.push(base.chain((o) => fc.constantFrom(...names).chain((k) => hostileValue(properties[k]!, depth + 1).map((v) => ({ ...o, [k]: v })))));
    }
    return fc.oneof(...mutations);
  }

  return { validValue, hostileValue, resolve };
}

function builtInFormats(): Record<string, fc.Arbitrary<string>> {
  const label = fc.stringMatching(/^[a-z][a-z0-9]{0,9}$/);
  return {
    'date-time': fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
    date: fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
    email: fc.tuple(fc.stringMatching(/^[a-z0-9][a-z0-9_+-]{0,20}$/), label).map(([local, domain]) => `${local}@${domain}.test`),
    // Loopback only: nothing the platform fetches from a fuzzed request may leave the machine.
    uri: fc.tuple(fc.constantFrom('https://127.0.0.1', 'https://localhost', 'http://127.0.0.1:9', 'https://[::1]'), fc.array(label, { maxLength: 3 })).map(([origin, parts]) => `${origin}/${parts.join('/')}`),
    'uri-reference': fc.array(label, { maxLength: 3 }).map((parts) => `/${parts.join('/')}`),
    uuid: fc.uuid(),
  };
}

function integerBounds(s: Node): { min: number; max: number } {
  const wide = s.format === 'int64' ? Number.MAX_SAFE_INTEGER : 2 ** 31 - 1;
  let min = num(s.minimum) ?? -wide;
  let max = num(s.maximum) ?? wide;
  if (num(s.exclusiveMinimum) !== undefined) min = Math.floor(num(s.exclusiveMinimum)!) + 1;
  if (num(s.exclusiveMaximum) !== undefined) max = Math.ceil(num(s.exclusiveMaximum)!) - 1;
  return { min: Math.ceil(min), max: Math.floor(max) };
}

function numberOf(s: Node): fc.Arbitrary<number> {
  const min = num(s.minimum) ?? num(s.exclusiveMinimum) ?? -1e9;
  const max = num(s.maximum) ?? num(s.exclusiveMaximum) ?? 1e9;
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).filter((n) => n !== s.exclusiveMinimum && n !== s.exclusiveMaximum && !Object.is(n, -0));
}

/** Merges schemas for allOf (and keywords beside a $ref): properties and required unite, other keywords the last wins. */
function mergeAll(schemas: Schema[]): Schema {
  const out: Node = {};
  for (const schema of schemas) {
    if (schema === true) continue;
    if (schema === false) return false;
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'properties') out.properties = { ...(out.properties as Node), ...(value as Node) };
      else if (key === 'required') out.required = [...new Set([...((out.required as string[]) ?? []), ...(value as string[])])];
      else out[key] = value;
    }
  }
  return out;
}

function pointer(root: object, ref: string): Schema {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported: ${ref}`);
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    node = (node as Node | undefined)?.[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  if (node === undefined) throw new Error(`$ref ${ref} points nowhere`);
  return node as Schema;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

/** JSON Schema counts code points, not UTF-16 units. */
export function codePoints(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function anyJson(): fc.Arbitrary<unknown> {
  return fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom<unknown>(...NOT_NULL_TYPES, null));
}

function omit(o: unknown, key: string): unknown {
  if (!o || typeof o !== 'object') return o;
  const { [key]: _, ...rest } = o as Node;
  return rest;
}
