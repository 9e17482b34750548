import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { JSON_SCHEMA_FORMATS, createAjv, formatErrors } from '../src/ajv.ts';
import { checkOpenApiDocument } from '../src/openapi-check.ts';
import { HTTP_METHODS, deref, resolveRef, type OpenApiDocument, type OpenApiOperation, type OpenApiParameter, type OpenApiResponse } from '../src/openapi.ts';
import { STRATA, STRATA_ROLES, isStrataRole } from '../src/strata.ts';
import { STRATA_OPENAPI_PATH, listStrataOperations, loadStrataOpenApi, strataOpenApiYaml } from '../src/strata-openapi.ts';

const repoRoot = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const sharedSpecPath = path.resolve(repoRoot, '../shared/spec/backup-service.md');
const vendoredSpecPath = path.resolve(repoRoot, 'docs/spec/backup-service.md');
const specPath = existsSync(sharedSpecPath) ? sharedSpecPath : vendoredSpecPath;
const apiDocPath = path.resolve(repoRoot, 'docs/strata-api.md');

const SECURITY = [{ accessJWT: [] }, { accessToken: [] }, { accessCookie: [] }];
const TAGS = ['targets', 'backups', 'changes', 'restores', 'sandboxes', 'activity', 'meta', 'resources', 'secrets'];
const SCHEMA_PREFIX = '#/components/schemas/';
const COMPONENTS_ID = 'https://strata.dev/openapi/components';

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function load(): OpenApiDocument {
  return loadStrataOpenApi() as unknown as OpenApiDocument;
}

function cells(line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
}

/** The lines of a markdown part, from its heading to the next heading of the same or a higher level. */
function section(markdown: string, heading: RegExp): string[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => heading.test(l));
  if (start === -1) throw new Error(`heading ${heading} not found`);
  const level = /^#+/.exec(lines[start] ?? '')?.[0].length ?? 2;
  const end = lines.findIndex((l, i) => i > start && new RegExp(`^#{1,${level}}\\s`).test(l));
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

/** Rows of the markdown tables in `lines`, header and separator rows removed. */
function tableRows(lines: string[]): string[][] {
  const rows = lines.filter((l) => l.trim().startsWith('|')).map(cells);
  return rows.filter((r, i) => !r.every((c) => /^:?-+:?$/.test(c)) && !(rows[i + 1]?.every((c) => /^:?-+:?$/.test(c)) ?? false));
}

/** Backticked identifiers of a cell (`a`, `b`), without values such as `namespace/name`. */
function identifiers(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string).filter((t) => /^[A-Za-z_]\w*$/.test(t));
}

/** Removes `format: int64` (an OpenAPI format annotation, unknown to strict JSON Schema validators). */
function withoutInt64(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutInt64);
  if (!isRecord(node)) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === 'format' && v === 'int64'))
      .map(([k, v]) => [k, withoutInt64(v)]),
  );
}

function collectRefs(node: unknown, at: string, out: Array<{ at: string; ref: string }>): void {
  if (Array.isArray(node)) node.forEach((c, i) => collectRefs(c, `${at}/${i}`, out));
  else if (isRecord(node)) {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push({ at, ref: v });
      else collectRefs(v, `${at}/${k}`, out);
    }
  }
}

function rewriteRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (!isRecord(node)) return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' && v.startsWith(SCHEMA_PREFIX) ? `#/$defs/${v.slice(SCHEMA_PREFIX.length)}` : rewriteRefs(v),
    ]),
  );
}

const INT64_FORMAT = { type: 'number' as const, validate: (n: number): boolean => Number.isSafeInteger(n) };

/** Strict JSON Schema 2020-12 validation against the document's component schemas (int64 format registered). */
function schemaValidator(doc: OpenApiDocument): (name: string, value: unknown) => string[] {
  const ajv = createAjv({ formats: { int64: INT64_FORMAT } });
  ajv.addKeyword('example');
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: rewriteRefs(doc.components?.schemas ?? {}) as Json });
  return (name, value) => {
    const validate = ajv.getSchema(`${COMPONENTS_ID}#/$defs/${name}`);
    if (!validate) throw new Error(`no schema ${name}`);
    return validate(value) ? [] : formatErrors(validate.errors);
  };
}

function operations(doc: OpenApiDocument): Array<{ method: string; path: string; op: OpenApiOperation }> {
  const out: Array<{ method: string; path: string; op: OpenApiOperation }> = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (op) out.push({ method, path: p, op });
    }
  }
  return out;
}

function operationById(doc: OpenApiDocument, id: string): { method: string; path: string; op: OpenApiOperation } {
  const found = operations(doc).find((o) => o.op.operationId === id);
  if (!found) throw new Error(`no operation ${id}`);
  return found;
}

/** Effective parameters of an operation (path-level plus operation-level), dereferenced. */
function parametersOf(doc: OpenApiDocument, p: string, op: OpenApiOperation): OpenApiParameter[] {
  const all = [...(doc.paths[p]?.parameters ?? []), ...(op.parameters ?? [])];
  return all.map((x) => deref<OpenApiParameter>(doc, x)).filter((x): x is OpenApiParameter => x !== undefined);
}

function schemaOfResponse(doc: OpenApiDocument, op: OpenApiOperation, status: string, mediaType = 'application/json'): unknown {
  const res = op.responses[status];
  if (!res) return undefined;
  return deref<OpenApiResponse>(doc, res)?.content?.[mediaType]?.schema;
}

function requestBodyOf(doc: OpenApiDocument, op: OpenApiOperation): { required?: boolean; content: Record<string, { schema?: unknown }> } | undefined {
  return op.requestBody === undefined ? undefined : deref(doc, op.requestBody);
}

/** Schema names a schema refers to directly (through `$ref`, `allOf`, `oneOf`, `anyOf`, `items`). */
function refNames(schema: unknown): string[] {
  if (!isRecord(schema)) return [];
  const out: string[] = [];
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith(SCHEMA_PREFIX)) out.push(schema.$ref.slice(SCHEMA_PREFIX.length));
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    const list = schema[key];
    if (Array.isArray(list)) for (const s of list) out.push(...refNames(s));
  }
  if (schema.items !== undefined) out.push(...refNames(schema.items));
  return out;
}

/** Every property (name and schema) reachable from the named schemas, following `$ref`s. */
function propertyTree(doc: OpenApiDocument, names: string[]): Map<string, Json[]> {
  const out = new Map<string, Json[]>();
  const seen = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isRecord(node)) return;
    if (typeof node.$ref === 'string') {
      if (seen.has(node.$ref)) return;
      seen.add(node.$ref);
      visit(resolveRef(doc, node.$ref));
    }
    if (isRecord(node.properties)) {
      for (const [name, prop] of Object.entries(node.properties)) {
        if (isRecord(prop)) out.set(name, [...(out.get(name) ?? []), prop]);
        visit(prop);
      }
    }
    for (const key of ['items', 'additionalProperties', 'allOf', 'oneOf', 'anyOf']) visit(node[key]);
  };
  for (const name of names) visit({ $ref: SCHEMA_PREFIX + name });
  return out;
}

/** The JSON types a schema admits (through `$ref`, `oneOf` and `anyOf`). */
function typesOf(doc: OpenApiDocument, schema: unknown, depth = 0): Set<string> {
  const out = new Set<string>();
  if (!isRecord(schema) || depth > 16) return out;
  if (typeof schema.type === 'string') out.add(schema.type);
  if (Array.isArray(schema.type)) for (const t of schema.type) out.add(String(t));
  if (out.size > 0) return out;
  if (typeof schema.$ref === 'string') return typesOf(doc, resolveRef(doc, schema.$ref), depth + 1);
  for (const key of ['oneOf', 'anyOf']) {
    const list = schema[key];
    if (Array.isArray(list)) for (const s of list) for (const t of typesOf(doc, s, depth + 1)) out.add(t);
  }
  return out;
}

function formatOf(doc: OpenApiDocument, schema: unknown, depth = 0): string | undefined {
  if (!isRecord(schema) || depth > 16) return undefined;
  if (typeof schema.format === 'string') return schema.format;
  if (typeof schema.$ref === 'string') return formatOf(doc, resolveRef(doc, schema.$ref), depth + 1);
  return undefined;
}

/** The part 2.1 object names of a table row (`SegmentList / TargetSegmentList`, `ActionResult (Action)`). */
function objectNames(cell: string): string[] {
  return cell
    .replace(/\([^)]*\)/g, '')
    .split(/[/,]/)
    .map((n) => n.trim())
    .filter((n) => n !== '');
}

/** Backticked words of part 2.1 that are values, not fields. */
const VALUE_TOKENS = new Set(['ok', 'zstd', 'sandbox', 'latest', 'd', 'ns', 'us', 'ms', 's', 'm', 'h', 'w']);
/** Part 2.1 field names written with the neutral word `svc`. */
const FIELD_ALIASES: Record<string, string> = { svcVersion: STRATA.versionField };
/** Object names as the spec writes them, mapped to our schema names. */
const SCHEMA_ALIASES: Record<string, string> = { Action: 'ActionResult' };

function field(token: string): string {
  return FIELD_ALIASES[token] ?? token;
}

/**
 * Groups like "`a`, `b` int64" in a fields cell: the field names typed by `word`. Rows written as
 * "required `a`, `b` int64, ...; optional ..." (Inventory, QueryResult) type only the last name of a group.
 */
function typedFields(text: string, word: string): string[] {
  const lastOnly = /^required\b/.test(text);
  const re = new RegExp(`((?:\`\\w+\`,\\s*)*\`\\w+\`)\\s+${word}`, 'g');
  return [...text.matchAll(re)].flatMap((m) => (lastOnly ? identifiers(m[1] as string).slice(-1) : identifiers(m[1] as string))).map(field);
}

function readSpec(): string {
  if (!existsSync(specPath)) throw new Error(`The backup-service spec is missing: expected ${sharedSpecPath} or ${vendoredSpecPath}.`);
  return readFileSync(specPath, 'utf8');
}

interface DocRow {
  method: string;
  path: string;
  operationId: string;
  role: string;
  body: string;
  answer: string;
}

function readApiDocTable(): DocRow[] {
  return tableRows(section(readFileSync(apiDocPath, 'utf8'), /^## Operations and roles/))
    .map((r) => {
      const m = /^(GET|POST|PUT|PATCH|DELETE) (\/\S*)$/.exec(r[0] ?? '');
      if (!m) throw new Error(`docs/strata-api.md: cannot read row ${r.join(' | ')}`);
      return {
        method: (m[1] as string).toLowerCase(),
        path: m[2] as string,
        operationId: r[1] ?? '',
        role: /^[a-z-]+/.exec(r[2] ?? '')?.[0] ?? '',
        body: r[3] ?? '',
        answer: r[4] ?? '',
      };
    });
}

// ---------------------------------------------------------------------------------------------

describe('strata.v1.yaml is valid OpenAPI 3.1', () => {
  const doc = load();

  it('declares OpenAPI 3.1.0 with the /api/v1 server and paths without the prefix', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([expect.objectContaining({ url: STRATA.apiPrefix })]);
    expect(doc.info.title).toBeTruthy();
    for (const p of Object.keys(doc.paths)) {
      expect(p.startsWith('/')).toBe(true);
      expect(p.startsWith(STRATA.apiPrefix)).toBe(false);
    }
    expect(doc.paths['/whoami']).toBeDefined();
  });

  it('passes the structural and semantic checks of openapi-check (int64 is the only unknown format)', async () => {
    expect(await checkOpenApiDocument(withoutInt64(doc) as OpenApiDocument)).toEqual([]);
    // with int64 left in, the only complaints are about that format
    for (const problem of await checkOpenApiDocument(doc)) expect(problem).toContain('unknown format "int64"');
  });

  it('fails the checks on a broken $ref or an undeclared path parameter', async () => {
    const broken = withoutInt64(load()) as OpenApiDocument;
    const get = broken.paths['/whoami']?.get;
    const item = broken.paths['/targets/{ns}/{name}'];
    if (!get || !item) throw new Error('fixture');
    get.responses['200'] = { $ref: '#/components/responses/Nope' };
    item.parameters = [];
    const problems = await checkOpenApiDocument(broken);
    expect(problems).toContainEqual(expect.stringContaining('$ref #/components/responses/Nope does not resolve'));
    expect(problems).toContainEqual(expect.stringContaining('path parameter {ns} is not declared'));
  });

  it('every $ref resolves, and only local references are used', () => {
    const refs: Array<{ at: string; ref: string }> = [];
    collectRefs(doc, '', refs);
    expect(refs.length).toBeGreaterThan(100);
    const broken = refs.filter(({ ref }) => !ref.startsWith('#/') || resolveRef(doc, ref) === undefined);
    expect(broken).toEqual([]);
  });

  it('every component schema compiles under strict JSON Schema 2020-12 with int64 registered', () => {
    const validate = schemaValidator(doc);
    for (const name of Object.keys(doc.components?.schemas ?? {})) expect(() => validate(name, {}), name).not.toThrow();
  });

  it('every schema and operation has a one-line description', () => {
    for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
      const description = isRecord(schema) ? schema.description : undefined;
      expect(typeof description === 'string' && description.trim() !== '' && !description.trim().includes('\n'), name).toBe(true);
    }
    for (const { op } of operations(doc)) {
      expect(op.description?.trim(), op.operationId).toBeTruthy();
      expect(op.summary?.trim(), op.operationId).toBeTruthy();
    }
  });
});

describe('operations, roles, services and security', () => {
  const doc = load();

  it('defines the three access-proxy security schemes', () => {
    expect(doc.components?.securitySchemes).toEqual({
      accessJWT: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'Cf-Access-Jwt-Assertion' }),
      accessToken: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'cf-access-token' }),
      accessCookie: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: 'CF_Authorization' }),
    });
  });

  it('every operation names a valid role, a service, known tags and lists all three schemes', () => {
    for (const { method, path: p, op } of operations(doc)) {
      const where = `${method} ${p}`;
      expect(isStrataRole(op[STRATA.roleExtension]), where).toBe(true);
      expect(op.security, where).toEqual(SECURITY);
      expect(op['x-strata-service'], where).toBe(p.startsWith('/sandboxes') ? 'sandbox' : 'backup-catalog');
      expect(op.tags?.length, where).toBe(1);
      for (const tag of op.tags ?? []) expect(TAGS, where).toContain(tag);
    }
    expect((doc.tags ?? []).map((t) => t.name).sort()).toEqual([...TAGS].sort());
  });

  it('has exactly the operations of the table in docs/strata-api.md, with their roles', () => {
    const rows = readApiDocTable();
    expect(rows.length).toBeGreaterThan(30);
    const fromDoc = rows.map(({ method, path: p, operationId, role }) => ({ method, path: p, operationId, role }));
    const fromYaml = listStrataOperations(loadStrataOpenApi()).map(({ method, path: p, operationId, role }) => ({ method, path: p, operationId, role }));
    const byId = (a: { operationId: string }, b: { operationId: string }): number => a.operationId.localeCompare(b.operationId);
    expect(fromYaml.sort(byId)).toEqual(fromDoc.sort(byId));
  });

  it('follows the table of docs/strata-api.md for bodies, query parameters, limits and answers', () => {
    const schemas = doc.components?.schemas ?? {};
    for (const row of readApiDocTable()) {
      const { op, path: p } = operationById(doc, row.operationId);
      const where = row.operationId;

      // request body: the named schema, optional when the table says so
      const bodyName = /^([A-Z]\w*)/.exec(row.body)?.[1];
      if (bodyName && bodyName in schemas) {
        const body = requestBodyOf(doc, op);
        expect(body, where).toBeDefined();
        expect(refNames(body?.content['application/json']?.schema), where).toContain(bodyName);
        expect(body?.required === true, where).toBe(!/\(optional\)/.test(row.body));
      }

      // query parameters named in the body/query column
      const params = parametersOf(doc, p, op);
      const query = params.filter((x) => x.in === 'query').map((x) => x.name);
      if (!bodyName) for (const name of identifiers(row.body)) expect(query, where).toContain(name);
      for (const name of ['since', 'at']) {
        const ref = `#/components/parameters/${name === 'since' ? 'Since' : 'At'}`;
        const used = (op.parameters ?? []).some((x) => '$ref' in x && x.$ref === ref);
        expect(used, `${where} ${name}`).toBe(identifiers(row.body).includes(name));
      }
      const limit = /`limit` (\d+)\.\.(\d+), default (\d+)/.exec(row.body);
      if (limit) {
        const schema = params.find((x) => x.in === 'query' && x.name === 'limit')?.schema;
        expect(schema, where).toEqual({ type: 'integer', minimum: Number(limit[1]), maximum: Number(limit[2]), default: Number(limit[3]) });
      }

      // answer: status 202 when the table says so, and the named schema
      const answer = /^(?:(\d{3}) )?([A-Z]\w*)/.exec(row.answer);
      const status = answer?.[1] ?? '200';
      const answerName = answer?.[2] ? (SCHEMA_ALIASES[answer[2]] ?? answer[2]) : undefined;
      expect(Object.keys(op.responses).filter((s) => s.startsWith('2')), where).toEqual([status]);
      if (answerName && answerName in schemas) expect(refNames(schemaOfResponse(doc, op, status)), where).toEqual([answerName]);
    }
  });

  it('documents the special media types', () => {
    const openapi = operationById(doc, 'getOpenApi').op;
    expect(schemaOfResponse(doc, openapi, '200', 'application/yaml')).toMatchObject({ type: 'string' });
    expect(schemaOfResponse(doc, openapi, '200', 'application/json')).toMatchObject({ type: 'object' });

    const events = operationById(doc, 'streamEvents').op;
    expect(Object.keys(deref<OpenApiResponse>(doc, events.responses['200'] ?? { $ref: '' })?.content ?? {})).toEqual(['text/event-stream']);
    expect(schemaOfResponse(doc, events, '200', 'text/event-stream')).toMatchObject({ type: 'string' });
    for (const line of ['event: <kind>', 'id: <version>', 'data: <Event JSON', ': keep-alive', '15 s']) expect(events.description).toContain(line);

    const query = operationById(doc, 'querySandbox').op;
    expect(refNames(schemaOfResponse(doc, query, '200'))).toEqual(['QueryResult']);
    expect(schemaOfResponse(doc, query, '200', 'text/plain')).toMatchObject({ type: 'string' });
    expect(query.description).toContain('Accept: text/plain');

    const apply = requestBodyOf(doc, operationById(doc, 'applyResources').op);
    expect(apply?.required).toBe(true);
    expect(apply?.content['application/yaml']?.schema).toMatchObject({ type: 'string', minLength: 1, maxLength: 1048576 });
    expect(apply?.content['application/json']?.schema).toMatchObject({ oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }] });

    const createRestore = operationById(doc, 'createRestore').op;
    expect(createRestore['x-strata-mode-roles']).toEqual({ 'in-place': 'restorer-admin' });
  });

  it('every error response is the Error schema: 400, 401, 403 and default always, 404 for named objects', () => {
    for (const { method, path: p, op } of operations(doc)) {
      const where = `${method} ${p}`;
      for (const status of ['400', '401', '403', 'default']) expect(op.responses[status], `${where} ${status}`).toBeDefined();
      // a PUT creates or replaces: no 404
      if (p.includes('{') && method !== 'put') expect(op.responses['404'], `${where} 404`).toBeDefined();
      for (const [status, res] of Object.entries(op.responses)) {
        if (/^[23]/.test(status)) continue;
        expect(res, `${where} ${status}`).toHaveProperty('$ref');
        const resolved = deref<OpenApiResponse>(doc, res);
        expect(Object.keys(resolved?.content ?? {}), `${where} ${status}`).toEqual(['application/json']);
        expect(resolved?.content?.['application/json']?.schema, `${where} ${status}`).toEqual({ $ref: `${SCHEMA_PREFIX}Error` });
      }
    }
    const statuses = (id: string): string[] => Object.keys(operationById(doc, id).op.responses);
    expect(statuses('createRestore')).toEqual(expect.arrayContaining(['404', '409', '422']));
    expect(statuses('createSandbox')).toEqual(expect.arrayContaining(['404', '409', '422']));
    expect(statuses('backupNow')).toContain('409');
    expect(statuses('applyResources')).toContain('409');
    expect(statuses('deleteResource')).toContain('409');
    for (const name of ['BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'Conflict', 'NotRestorable', 'ServerError']) {
      expect(doc.components?.responses?.[name]?.content?.['application/json']?.schema).toEqual({ $ref: `${SCHEMA_PREFIX}Error` });
    }
  });

  it('path parameters carry the agreed patterns', () => {
    const params = doc.components?.parameters ?? {};
    expect(params.Namespace?.schema).toMatchObject({ pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' });
    expect(params.Name?.schema).toMatchObject({ pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' });
    expect(doc.components?.schemas?.BackupId).toMatchObject({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' });
    for (const { path: p, op } of operations(doc)) {
      for (const x of parametersOf(doc, p, op).filter((y) => y.in === 'path')) {
        const schema = deref(doc, x.schema ?? {});
        expect(isRecord(schema) && (typeof schema.pattern === 'string' || Array.isArray(schema.enum)), `${op.operationId} ${x.name}`).toBe(true);
      }
    }
  });
});

describe(`spec coverage (${specPath})`, () => {
  const doc = load();
  const spec = readSpec();

  it('every endpoint of part 4 with a concrete path exists, with its query parameters and answer', () => {
    const rows = tableRows(section(spec, /^## 4\.\s/));
    const concrete = rows.filter((r) => /^`(GET|POST|PUT|PATCH|DELETE) \S+`$/.test(r[0] ?? ''));
    expect(concrete.length).toBeGreaterThan(15);
    for (const r of concrete) {
      const [, method, p] = /^`(\w+) (\S+)`$/.exec(r[0] ?? '') ?? [];
      const op = doc.paths[p ?? '']?.[(method ?? '').toLowerCase() as 'get'];
      expect(op, r[0]).toBeDefined();
      if (!op || !p) continue;
      const shape = r[1] ?? '';
      const answer = /\b200 ([A-Z]\w*)/.exec(shape)?.[1];
      if (answer) expect(refNames(schemaOfResponse(doc, op, '200')), r[0]).toEqual([answer]);
      if (shape.startsWith('query ')) {
        const names = identifiers(shape.split(';')[0] ?? '');
        const query = parametersOf(doc, p, op).filter((x) => x.in === 'query').map((x) => x.name);
        for (const name of names) expect(query, `${r[0]} ${name}`).toContain(name);
      }
    }
    // the query operation whose path the spec does not show
    const query = operationById(doc, 'querySandbox').op;
    expect(refNames(requestBodyOf(doc, query)?.content['application/json']?.schema)).toEqual(['QueryRequest']);
  });

  it('every object of part 2.1 exists in components.schemas with every field and its type', () => {
    const rows = tableRows(section(spec, /^### 2\.1\s/));
    expect(rows.length).toBeGreaterThanOrEqual(50);
    const schemas = doc.components?.schemas ?? {};
    const typeChecks: Array<[string, (props: Json[]) => boolean]> = [
      ['int64', (ps) => ps.some((s) => formatOf(doc, s) === 'int64' && typesOf(doc, s).has('integer'))],
      ['date-time', (ps) => ps.some((s) => formatOf(doc, s) === 'date-time' && typesOf(doc, s).has('string'))],
      ['integers?\\b', (ps) => ps.some((s) => typesOf(doc, s).has('integer'))],
      ['booleans?\\b', (ps) => ps.some((s) => typesOf(doc, s).has('boolean'))],
      ['numbers?\\b', (ps) => ps.some((s) => typesOf(doc, s).has('number'))],
      ['strings?\\b(?!\\[)', (ps) => ps.some((s) => typesOf(doc, s).has('string'))],
      ['string\\[\\](?!\\[)', (ps) => ps.some((s) => typesOf(doc, s).has('array') && typesOf(doc, s.items).has('string'))],
    ];
    const problems: string[] = [];
    const check = (ok: boolean, what: string): void => {
      if (!ok) problems.push(what);
    };
    for (const row of rows) {
      const names = objectNames(row[0] ?? '');
      const fieldsCell = row[1] ?? '';
      for (const name of names) check(name in schemas, `part 2.1 object ${name} is missing`);
      if (!names.every((n) => n in schemas)) continue;
      const own = names.map((n) => schemas[n]);
      if (own.every((s) => isRecord(s) && s.type === 'string')) continue; // Duration: a pattern, not fields
      const tree = propertyTree(doc, names);
      for (const token of identifiers(fieldsCell).filter((t) => !VALUE_TOKENS.has(t)).map(field)) {
        check(tree.has(token), `${names.join('/')}.${token} is missing`);
      }
      for (const [word, hasType] of typeChecks) {
        for (const name of typedFields(fieldsCell, word)) check(hasType(tree.get(name) ?? []), `${names.join('/')}.${name} is not ${word}`);
      }
      // `a` TypeName / `a` TypeName[]: the field refers to that schema
      for (const m of fieldsCell.matchAll(/`(\w+)` ([A-Z]\w*)(\[\])?/g)) {
        const [, prop, type] = m as unknown as [string, string, string];
        if (!(type in schemas)) continue;
        const candidates = tree.get(field(prop)) ?? [];
        check(candidates.some((s) => refNames(s).includes(type)), `${names.join('/')}.${prop} is not ${type}`);
      }
      // "(all required)" and "`x` ... (required)"
      if (/\(all required\)/.test(fieldsCell)) {
        for (const name of names) {
          const required = (schemas[name] as { required?: string[] }).required ?? [];
          check(JSON.stringify([...required].sort()) === JSON.stringify(identifiers(fieldsCell).map(field).sort()), `${name}: all required`);
        }
      }
      for (const m of fieldsCell.matchAll(/`(\w+)`[^`;]*?\((?:required)\)/g)) {
        check(names.some((n) => ((schemas[n] as { required?: string[] }).required ?? []).includes(m[1] as string)), `${names.join('/')}.${m[1]} is not required`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('marks required exactly the members part 2.1 marks', () => {
    const required = (name: string): string[] => [...((doc.components?.schemas?.[name] as { required?: string[] }).required ?? [])].sort();
    expect(required('Whoami')).toEqual(['externalURL', 'principal', 'version']);
    expect(required('Settings')).toEqual(['catalog', 'policies', 'stores', 'version']);
    expect(required('TargetList')).toEqual(['catalogVersion']);
    expect(required('TargetDetail')).toEqual(['target']);
    expect(required('BackupDetail')).toEqual(['backup', 'manifest', 'tags']);
    expect(required('QueryRequest')).toEqual(['sql']);
    expect(required('QueryResult')).toEqual(['columns', 'ms', 'rows', 'truncated']);
    expect(required('Error')).toEqual(['error']);
    expect(required('ActionResult')).toEqual(['message']);
    expect(required('Inventory')).toEqual(['collectedAt', 'databases', 'engine', 'schemaHash', 'server']);
    expect(required('InventoryDatabase')).toEqual(['name', 'schemaHash', 'sizeBytes', 'tables']);
    expect(required('InventoryTable')).toEqual(['columns', 'fingerprint', 'name', 'rowsEstimate', 'totalBytes']);
    for (const name of ['Principal', 'Target', 'Backup', 'Restore', 'Sandbox', 'RestoreRequest', 'PinRequest', 'ReasonRequest', 'ExtendRequest']) {
      expect(required(name), name).toEqual([]);
    }
  });

  it('the Manifest names the service version with the product word, and Target has the variant fields', () => {
    const props = (name: string): string[] => Object.keys((doc.components?.schemas?.[name] as { properties: Json }).properties);
    expect(props('Manifest')).toContain(STRATA.versionField);
    expect(props('Manifest')).not.toContain('svcVersion');
    expect(props('Target')).toEqual(expect.arrayContaining(['replicationDenied', 'replicationFix']));
  });
});

describe('component schemas accept and reject values', () => {
  const doc = load();
  const validate = schemaValidator(doc);
  const now = '2025-01-02T03:04:05Z';

  it('request bodies are closed (additionalProperties false)', () => {
    for (const name of ['ReasonRequest', 'PinRequest', 'ExtendRequest', 'QueryRequest', 'RestoreRequest', 'SecretRequest']) {
      expect((doc.components?.schemas?.[name] as Json).additionalProperties, name).toBe(false);
      expect(validate(name, { unknownMember: 1 }), name).not.toEqual([]);
    }
  });

  it('ReasonRequest: reason at most 1000 characters (part 8)', () => {
    expect(doc.components?.schemas?.ReasonRequest).toMatchObject({ properties: { reason: { type: 'string', maxLength: 1000 } } });
    expect(validate('ReasonRequest', {})).toEqual([]);
    expect(validate('ReasonRequest', { reason: 'x'.repeat(1000) })).toEqual([]);
    expect(validate('ReasonRequest', { reason: 'x'.repeat(1001) })).not.toEqual([]);
  });

  it('QueryRequest: sql 1 to 262144 characters, limit 1 to 1000 (part 8)', () => {
    expect(doc.components?.schemas?.QueryRequest).toMatchObject({
      properties: { sql: { type: 'string', minLength: 1, maxLength: 262144 }, limit: { type: 'integer', minimum: 1, maximum: 1000 } },
    });
    expect(validate('QueryRequest', { sql: 'select 1', database: 'app', write: false, limit: 1000 })).toEqual([]);
    expect(validate('QueryRequest', { sql: 'x'.repeat(262144) })).toEqual([]);
    expect(validate('QueryRequest', { sql: '' })).not.toEqual([]);
    expect(validate('QueryRequest', { sql: 'x'.repeat(262145) })).not.toEqual([]);
    expect(validate('QueryRequest', { sql: 'select 1', limit: 0 })).not.toEqual([]);
    expect(validate('QueryRequest', { sql: 'select 1', limit: 1001 })).not.toEqual([]);
    expect(validate('QueryRequest', { limit: 5 })).not.toEqual([]);
  });

  it('Duration follows part 2.1', () => {
    for (const ok of ['7d', '2w', '36h', '15m', '60s', '500ms', '1.5h', '1h30m', '10us', '5ns']) expect(validate('Duration', ok), ok).toEqual([]);
    for (const bad of ['', 'h', '1', '1y', '-1h', '1 h', '1.h', 'PT1H']) expect(validate('Duration', bad), bad).not.toEqual([]);
  });

  it('RestoreRequest: mode, at (time or latest), port, target and ttl', () => {
    const ok = {
      target: 'shop/orders-db',
      backupID: '20250102T030405Z-a1b2',
      at: 'latest',
      mode: 'new',
      database: 'orders_copy',
      host: 'db.internal',
      port: 5432,
      expose: false,
      tables: ['public.orders'],
      ttl: '4h',
      confirm: 'orders-db',
      credentialsSecret: 'admin-creds',
      skipSafetyBackup: false,
      reason: 'incident 42',
    };
    expect(validate('RestoreRequest', ok)).toEqual([]);
    expect(validate('RestoreRequest', {})).toEqual([]);
    expect(validate('RestoreRequest', { ...ok, at: now })).toEqual([]);
    for (const mode of ['sandbox', 'new', 'in-place', 'download']) expect(validate('RestoreRequest', { mode }), mode).toEqual([]);
    expect(validate('RestoreRequest', { mode: 'copy' })).not.toEqual([]);
    expect(validate('RestoreRequest', { at: 'yesterday' })).not.toEqual([]);
    expect(validate('RestoreRequest', { at: '2025-13-02T03:04:05Z' })).not.toEqual([]);
    expect(validate('RestoreRequest', { port: 0 })).not.toEqual([]);
    expect(validate('RestoreRequest', { port: 65536 })).not.toEqual([]);
    expect(validate('RestoreRequest', { port: 65535 })).toEqual([]);
    expect(validate('RestoreRequest', { target: 'orders-db' })).not.toEqual([]);
    expect(validate('RestoreRequest', { target: 'Shop/orders-db' })).not.toEqual([]);
    expect(validate('RestoreRequest', { target: 'shop/orders.db-1' })).toEqual([]);
    expect(validate('RestoreRequest', { ttl: '4 hours' })).not.toEqual([]);
    expect(validate('RestoreRequest', { backupID: '../x' })).not.toEqual([]);
    expect(doc.components?.schemas?.RestoreRequest).toMatchObject({ properties: { at: { default: 'latest' } } });
  });

  it('PinRequest, ExtendRequest and SecretRequest', () => {
    for (const expires of ['', '30d', now]) expect(validate('PinRequest', { expires, reason: 'audit' }), expires).toEqual([]);
    expect(validate('PinRequest', { expires: 'forever' })).not.toEqual([]);
    expect(validate('ExtendRequest', { by: '2h', reason: 'more time' })).toEqual([]);
    expect(validate('ExtendRequest', { by: '2 hours' })).not.toEqual([]);
    expect(validate('SecretRequest', { data: { accessKeyId: 'AKIA', 'secret.Access_key-1': 'x' } })).toEqual([]);
    expect(validate('SecretRequest', { data: {} })).not.toEqual([]);
    expect(validate('SecretRequest', {})).not.toEqual([]);
    expect(validate('SecretRequest', { data: { 'a b': 'x' } })).not.toEqual([]);
    expect(validate('SecretRequest', { data: { a: 'x'.repeat(65537) } })).not.toEqual([]);
    expect(validate('SecretRequest', { data: { a: 'x'.repeat(65536) } })).toEqual([]);
    expect(validate('SecretRequest', { data: { a: 1 } })).not.toEqual([]);
  });

  it('responses: required members, roles, int64 and nullable references', () => {
    const principal = { id: 'u1', email: 'ada@example.com', role: 'restorer', groups: ['dba'], orgs: ['acme'], projects: ['shop'], service: false };
    expect(validate('Whoami', { principal, version: STRATA.version, externalURL: 'https://strata.example.com' })).toEqual([]);
    expect(validate('Whoami', { principal, version: STRATA.version })).not.toEqual([]);
    for (const role of STRATA_ROLES) expect(validate('Principal', { ...principal, role }), role).toEqual([]);
    expect(validate('Principal', { ...principal, role: 'admin' })).not.toEqual([]);
    expect(validate('TargetList', { targets: [] })).not.toEqual([]);
    expect(validate('TargetList', { targets: [], catalogVersion: 7 })).toEqual([]);
    expect(validate('CatalogState', { targets: 1, backups: 2, version: 1.5 })).not.toEqual([]);
    expect(validate('Error', {})).not.toEqual([]);
    expect(validate('Error', { error: 'not found' })).toEqual([]);
    expect(validate('ActionResult', { kind: 'Backup' })).not.toEqual([]);
    expect(validate('ActionResult', { message: 'Backup requested', kind: 'Backup', namespace: 'shop', name: 'orders-db-x1', link: '/backups/x1' })).toEqual([]);
    expect(validate('QueryResult', { columns: ['a'], rows: [['1']], truncated: false })).not.toEqual([]);
    expect(validate('QueryResult', { columns: ['a'], rows: [['1']], truncated: false, ms: 3, masked: [] })).toEqual([]);

    const backupRef = { name: 'orders-db-x1', id: 'x1', time: now, phase: 'Completed' };
    expect(validate('Target', { namespace: 'shop', name: 'orders-db', lastFull: null, health: 'ok', storedBytes: 12 })).toEqual([]);
    expect(validate('Target', { lastFull: backupRef })).toEqual([]);
    expect(validate('Target', { lastFull: { ...backupRef, time: 'soon' } })).not.toEqual([]);
    expect(validate('Target', { lastSuccess: 'yesterday' })).not.toEqual([]);
    const progress = { stage: 'upload', bytes: 10, totalBytes: 100, updatedAt: now };
    const plan = { baseBackupID: 'x1', message: '', bytes: 10, segments: 2, targetTime: now };
    expect(validate('Restore', { mode: 'sandbox', plan: null, progress: null })).toEqual([]);
    expect(validate('Restore', { mode: 'sandbox', plan, progress })).toEqual([]);
    expect(validate('Restore', { mode: 'sideways' })).not.toEqual([]);
    expect(validate('BackupRun', { progress: null })).toEqual([]);
    expect(validate('BackupRun', { progress: { bytes: 'many' } })).not.toEqual([]);

    const inventory = {
      collectedAt: now,
      engine: 'postgres',
      server: { version: '16.4', major: 16, sizeBytes: 1024 },
      schemaHash: 'h',
      databases: [
        {
          name: 'app',
          sizeBytes: 1024,
          schemaHash: 'h',
          tables: [{ name: 'orders', rowsEstimate: 10, totalBytes: 8192, fingerprint: 'f', columns: [{ name: 'id', type: 'bigint', nullable: false }] }],
        },
      ],
      extra: { collation: 'C' },
    };
    expect(validate('Inventory', inventory)).toEqual([]);
    expect(validate('Inventory', { ...inventory, schemaHash: undefined })).not.toEqual([]);
    expect(validate('Inventory', { ...inventory, extra: { n: 1 } })).not.toEqual([]);
    expect(validate('BackupDetail', { backup: {}, manifest: {} })).not.toEqual([]);
    expect(validate('Event', { kind: 'backup', version: 3 })).toEqual([]);
    expect(validate('Event', { kind: 'weather' })).not.toEqual([]);
    expect(validate('ChangeSummary', { target: 'shop/orders-db', since: now, at: now, tables: { 'public.orders': { inserts: 1, updates: 2, deletes: 0, truncates: 0 } } })).toEqual([]);
    expect(validate('ApplyResult', { applied: [{ kind: 'BackupTarget', namespace: 'shop', name: 'orders-db', action: 'created' }], message: '1 created' })).toEqual([]);
    expect(validate('ApplyResult', { applied: [{ kind: 'BackupTarget', namespace: 'shop', name: 'orders-db', action: 'deleted' }], message: '' })).not.toEqual([]);
    expect(validate('SecretList', { secrets: [{ namespace: 'strata', name: 's3', keys: ['accessKeyId'], updatedAt: now }] })).toEqual([]);
  });
});

/**
 * openapi-backend validates definitions against the OpenAPI 3.0 schema only; skip that step.
 * Strict init still dereferences every $ref, builds the router and compiles every validator.
 */
class Backend31 extends OpenAPIBackend {
  override validateDefinition(): Document {
    return this.document;
  }
}

describe('openapi-backend serves the document under /api/v1', () => {
  let api: Backend31;
  beforeAll(async () => {
    api = new Backend31({
      definition: loadStrataOpenApi() as unknown as Document,
      apiRoot: STRATA.apiPrefix,
      strict: true,
      customizeAjv: (ajv) => {
        for (const [name, format] of Object.entries(JSON_SCHEMA_FORMATS)) ajv.addFormat(name, format);
        ajv.addFormat('int64', INT64_FORMAT);
        return ajv;
      },
    });
    await api.init();
  }, 120_000);

  const req = (method: string, p: string, extra: { query?: string; body?: unknown } = {}) => ({
    method,
    path: `${STRATA.apiPrefix}${p}`,
    headers: { 'content-type': 'application/json' },
    ...extra,
  });
  const errorsAt = (method: string, p: string, extra: { query?: string; body?: unknown } = {}): string[] =>
    (api.validateRequest(req(method, p, extra)).errors ?? []).map((e) => e.instancePath);

  it('routes every operation', () => {
    expect(api.getOperations()).toHaveLength(listStrataOperations().length);
    expect(api.matchOperation(req('get', '/targets/shop/orders-db'))?.operationId).toBe('getTarget');
    expect(api.matchOperation(req('get', '/targets/shop/orders-db/segments/000000010000000000000003/previews'))?.operationId).toBe('getSegmentPreviews');
    expect(api.matchOperation(req('get', '/backups/x1/diff/x2'))?.operationId).toBe('diffBackups');
    expect(api.matchOperation(req('put', '/secrets/strata/s3-creds'))?.operationId).toBe('putSecret');
    expect(api.matchOperation(req('get', '/openapi.yaml'))?.operationId).toBe('getOpenApi');
  });

  it('validates path parameters, limits, since and at', () => {
    expect(errorsAt('get', '/targets/shop/orders-db/backups', { query: 'limit=1000' })).toEqual([]);
    expect(errorsAt('get', '/targets/shop/orders-db/backups', { query: 'limit=1001' })).toContain('/query/limit');
    expect(errorsAt('get', '/activity', { query: 'limit=500' })).toEqual([]);
    expect(errorsAt('get', '/activity', { query: 'limit=501' })).toContain('/query/limit');
    expect(errorsAt('get', '/audit', { query: 'limit=0' })).toContain('/query/limit');
    expect(errorsAt('get', '/targets/Shop_NS/orders-db')).toContain('/path/ns');
    expect(errorsAt('get', '/backups/.hidden')).toContain('/path/id');
    expect(errorsAt('get', '/targets/shop/orders-db/plan', { query: 'at=latest' })).toEqual([]);
    expect(errorsAt('get', '/targets/shop/orders-db/plan', { query: `at=${encodeURIComponent('2025-01-02T03:04:05Z')}` })).toEqual([]);
    expect(errorsAt('get', '/targets/shop/orders-db/plan', { query: 'at=yesterday' })).toContain('/query/at');
    expect(errorsAt('get', '/segments', { query: 'since=24h' })).toEqual([]);
    expect(errorsAt('get', '/segments', { query: 'since=yesterday' })).toContain('/query/since');
    expect(errorsAt('get', '/restores', { query: 'target=shop/orders-db' })).toEqual([]);
    expect(errorsAt('get', '/resources', { query: 'kind=Nonsense' })).toContain('/query/kind');
  });

  it('validates request bodies', () => {
    expect(errorsAt('post', '/targets/shop/orders-db/suspend', { body: { reason: 'maintenance' } })).toEqual([]);
    expect(errorsAt('post', '/targets/shop/orders-db/suspend', { body: { reason: 'x'.repeat(1001) } })).toContain('/requestBody/reason');
    expect(errorsAt('post', '/sandboxes/sb-1/query', { body: { sql: '' } })).toContain('/requestBody/sql');
    expect(errorsAt('post', '/restores', { body: { target: 'shop/orders-db', mode: 'in-place', confirm: 'orders-db' } })).toEqual([]);
    expect(errorsAt('post', '/restores', { body: { target: 'shop/orders-db', mode: 'in-place', port: 0 } })).toContain('/requestBody/port');
    expect(errorsAt('post', '/sandboxes', { body: { target: 'shop/orders-db', ttl: '4h' } })).toEqual([]);
    expect(errorsAt('post', '/sandboxes', { body: { target: 'shop/orders-db', mode: 'new' } })).not.toEqual([]);
    expect(errorsAt('put', '/secrets/strata/s3', { body: { data: {} } })).not.toEqual([]);
  });
});

describe('strata-openapi.ts', () => {
  it('STRATA_OPENAPI_PATH is the absolute path of the YAML, and strataOpenApiYaml its text', () => {
    expect(path.isAbsolute(STRATA_OPENAPI_PATH)).toBe(true);
    expect(STRATA_OPENAPI_PATH.endsWith(path.join('proto', 'openapi', 'strata.v1.yaml'))).toBe(true);
    expect(strataOpenApiYaml()).toBe(readFileSync(STRATA_OPENAPI_PATH, 'utf8'));
    expect(loadStrataOpenApi()).toEqual(parse(strataOpenApiYaml()));
  });

  it('loadStrataOpenApi returns a fresh deep copy each call', () => {
    const a = loadStrataOpenApi();
    const b = loadStrataOpenApi();
    expect(a).not.toBe(b);
    expect(a).toEqual(b);
    (a.info as Json).title = 'mutated';
    delete (a.paths as Json)['/whoami'];
    const c = loadStrataOpenApi();
    expect((c.info as Json).title).toBe('Strata console API');
    expect((c.paths as Json)['/whoami']).toBeDefined();
  });

  it('listStrataOperations reports operationId, method, path, role, service and tags', () => {
    const ops = listStrataOperations();
    expect(ops.find((o) => o.operationId === 'getTarget')).toEqual({
      operationId: 'getTarget',
      method: 'get',
      path: '/targets/{ns}/{name}',
      role: 'viewer',
      service: 'backup-catalog',
      tags: ['targets'],
    });
    expect(ops.find((o) => o.operationId === 'querySandbox')).toEqual({
      operationId: 'querySandbox',
      method: 'post',
      path: '/sandboxes/{name}/query',
      role: 'restorer',
      service: 'sandbox',
      tags: ['sandboxes'],
    });
    expect(new Set(ops.map((o) => o.operationId)).size).toBe(ops.length);
    expect(listStrataOperations(loadStrataOpenApi())).toEqual(ops);
  });

  it('listStrataOperations rejects an invalid role or service', () => {
    const badRole = loadStrataOpenApi();
    ((badRole.paths as Record<string, Record<string, Json>>)['/whoami']?.get ?? {})[STRATA.roleExtension] = 'admin';
    expect(() => listStrataOperations(badRole)).toThrow(/x-strata-role admin/);
    const badService = loadStrataOpenApi();
    ((badService.paths as Record<string, Record<string, Json>>)['/whoami']?.get ?? {})['x-strata-service'] = 'gateway';
    expect(() => listStrataOperations(badService)).toThrow(/x-strata-service gateway/);
  });
});
