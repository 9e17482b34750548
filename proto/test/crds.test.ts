import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { createAjv } from '../src/ajv.ts';
import { RESOURCE_KINDS, validateResource, type ResourceKind } from '../src/resources.ts';
import { CRD_NAMES, buildCrd, crdDir, crdFileName, renderCrdFiles, repoRoot, staleCrdFiles, toStructuralSchema } from '../scripts/emit-crds.ts';

type Node = Record<string, unknown>;

const emitter = path.join(repoRoot, 'proto/scripts/emit-crds.ts');
const API = 'backups.strata.dev/v1alpha1';

/** Keywords of Kubernetes' JSONSchemaProps that a structural schema may use. */
const ALLOWED = new Set([
  'description',
  'type',
  'format',
  'enum',
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'required',
  'properties',
  'items',
  'additionalProperties',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-validations',
]);

function readCrd(kind: ResourceKind): Node {
  return parse(readFileSync(path.join(crdDir, crdFileName(kind)), 'utf8')) as Node;
}

function versionOf(crd: Node): Node {
  return ((crd.spec as Node).versions as Node[])[0] as Node;
}

function openApiSchema(crd: Node): Node {
  return ((versionOf(crd).schema as Node).openAPIV3Schema as Node);
}

/** Calls visit on every schema node (properties, items, additionalProperties). */
function walkSchema(node: Node, visit: (node: Node, where: string) => void, where = ''): void {
  visit(node, where);
  for (const [name, sub] of Object.entries((node.properties as Record<string, Node> | undefined) ?? {})) walkSchema(sub, visit, `${where}.${name}`);
  if (node.items && typeof node.items === 'object') walkSchema(node.items as Node, visit, `${where}[]`);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') walkSchema(node.additionalProperties as Node, visit, `${where}{}`);
}

const MINIMAL: Record<ResourceKind, Node> = {
  BackupStore: {
    apiVersion: API,
    kind: 'BackupStore',
    metadata: { name: 'main' },
    spec: {
      s3: { endpoint: 'https://s3.example.com', region: 'eu-central-1', bucket: 'b', credentialsSecret: { name: 's3' } },
      encryption: { ageRecipients: ['age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p'], identitySecret: { name: 'id' } },
    },
  },
  BackupPolicy: { apiVersion: API, kind: 'BackupPolicy', metadata: { name: 'nightly' }, spec: { store: 'main', full: { schedule: '0 2 * * *' } } },
  BackupTarget: {
    apiVersion: API,
    kind: 'BackupTarget',
    metadata: { name: 'orders-db' },
    spec: { engine: 'mysql', endpoint: { host: 'db' }, credentials: { secretRef: { name: 'creds' } }, policy: 'nightly' },
  },
  Backup: { apiVersion: API, kind: 'Backup', metadata: { name: 'b1' }, spec: { target: 'orders-db', pinned: true, pinExpires: '2026-12-31T00:00:00Z' } },
  Restore: {
    apiVersion: API,
    kind: 'Restore',
    metadata: { name: 'r1' },
    spec: { target: 'orders-db', source: { backupID: 'x' }, destination: { mode: 'in-place', inPlace: { confirm: 'orders-db', credentialsSecretRef: { name: 'admin' } } } },
  },
  Sandbox: { apiVersion: API, kind: 'Sandbox', metadata: { name: 's1' }, spec: { engine: 'postgres', ttl: '4h', extensions: ['1d'] }, status: { phase: 'Ready', port: 5432 } },
};

describe('CRDs on disk', () => {
  it('are in sync with proto/resources/*.schema.json', () => {
    expect(staleCrdFiles()).toEqual([]);
    for (const [name, content] of renderCrdFiles()) expect(readFileSync(path.join(crdDir, name), 'utf8'), name).toBe(content);
  });

  it('hold one CRD per kind and a kustomization listing them, nothing else', () => {
    const expected = [...RESOURCE_KINDS.map(crdFileName), 'kustomization.yaml'].sort();
    expect(readdirSync(crdDir).sort()).toEqual(expected);
    const kustomization = parse(readFileSync(path.join(crdDir, 'kustomization.yaml'), 'utf8')) as Node;
    expect(kustomization.resources).toEqual(RESOURCE_KINDS.map(crdFileName));
  });

  it.each(RESOURCE_KINDS)('%s parses as a CustomResourceDefinition of backups.strata.dev/v1alpha1', (kind) => {
    const crd = readCrd(kind);
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.kind).toBe('CustomResourceDefinition');
    const spec = crd.spec as Node;
    const names = spec.names as Node;
    expect((crd.metadata as Node).name).toBe(`${names.plural as string}.backups.strata.dev`);
    expect(spec.group).toBe('backups.strata.dev');
    expect(spec.scope).toBe('Namespaced');
    expect(names).toMatchObject({ kind, listKind: `${kind}List`, singular: kind.toLowerCase(), categories: ['strata'] });
    expect((names.shortNames as string[]).length).toBeGreaterThan(0);
    expect(spec.versions as Node[]).toHaveLength(1);
    const version = versionOf(crd);
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
    const columns = (version.additionalPrinterColumns as Node[]).map((c) => c.name);
    expect(columns).toContain('Phase');
    expect(columns).toContain('Age');
  });

  it('short names and plurals are unique across kinds', () => {
    const all = RESOURCE_KINDS.flatMap((k) => [CRD_NAMES[k].plural, CRD_NAMES[k].singular, ...CRD_NAMES[k].shortNames]);
    expect(new Set(all).size).toBe(all.length);
  });

  it('BackupTarget shows Engine, Policy, Phase and Last Success', () => {
    const columns = versionOf(readCrd('BackupTarget')).additionalPrinterColumns as Node[];
    expect(columns.filter((c) => c.priority === undefined).map((c) => [c.name, c.jsonPath])).toEqual([
      ['Engine', '.spec.engine'],
      ['Policy', '.spec.policy'],
      ['Phase', '.status.phase'],
      ['Last Success', '.status.lastSuccessTime'],
      ['Age', '.metadata.creationTimestamp'],
    ]);
  });

  it.each(RESOURCE_KINDS)('%s: openAPIV3Schema is structural (no $ref, every node typed, only allowed keywords)', (kind) => {
    const schema = openApiSchema(readCrd(kind));
    const text = JSON.stringify(schema);
    for (const banned of ['$ref', '$defs', '$schema', '$id', '"const"', 'uniqueItems', 'quantityRange', 'cron5', 'iana-time-zone', '"regex"']) {
      expect(text, banned).not.toContain(banned);
    }
    walkSchema(schema, (node, where) => {
      for (const key of Object.keys(node)) expect(ALLOWED.has(key), `${kind}${where}: ${key}`).toBe(true);
      expect(typeof node.type, `${kind}${where}: type`).toBe('string');
      if (node.additionalProperties !== undefined) expect(typeof node.additionalProperties, `${kind}${where}`).toBe('object');
      if (node.format !== undefined) expect(node.format).toBe('date-time');
      if (node.type === 'object' && !node.properties && !node.additionalProperties && where !== '.metadata') {
        expect(node['x-kubernetes-preserve-unknown-fields'], `${kind}${where}`).toBe(true);
      }
      if (node['x-kubernetes-list-type'] === 'map') {
        const keys = node['x-kubernetes-list-map-keys'] as string[];
        const items = node.items as Node;
        for (const key of keys) expect(items.required as string[], `${kind}${where}`).toContain(key);
      }
    });
    const props = schema.properties as Record<string, Node>;
    expect(props.metadata).toEqual({ type: 'object' });
    expect(props.apiVersion?.type).toBe('string');
    expect(props.kind?.type).toBe('string');
    expect(schema.required).toEqual(['spec']);
  });

  it('keeps defaults, enums, patterns and bounds', () => {
    const at = (kind: ResourceKind, dotted: string): Node => {
      let node = openApiSchema(readCrd(kind));
      for (const key of dotted.split('.')) node = (node.properties as Record<string, Node>)[key] as Node;
      return node;
    };
    expect(at('BackupPolicy', 'spec.compression.threads')).toMatchObject({ type: 'integer', minimum: 0, maximum: 64 });
    expect(at('BackupPolicy', 'spec.compression.algorithm')).toMatchObject({ enum: ['zstd', 'none'], default: 'zstd' });
    expect(at('BackupPolicy', 'spec.compression')).toMatchObject({ default: {} });
    expect(at('BackupPolicy', 'spec.full.timeZone')).toEqual(expect.objectContaining({ type: 'string', default: 'UTC' }));
    expect(at('BackupPolicy', 'spec.full.timeZone').format).toBeUndefined();
    expect(at('BackupPolicy', 'spec.full.startingDeadline')).toMatchObject({ default: '6h', pattern: '^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h|d|w))+$' });
    expect(at('BackupPolicy', 'spec.keepBackupObjects')).toMatchObject({ default: 20 });
    expect(at('BackupStore', 'spec.upload.partSize')).toMatchObject({ type: 'string', default: '16Mi' });
    expect(at('BackupStore', 'spec.encryption.ageRecipients')).toMatchObject({ minItems: 1, 'x-kubernetes-list-type': 'set', items: { pattern: '^age1[02-9ac-hj-np-z]{58}$' } });
    expect(at('BackupTarget', 'spec.databases')).toMatchObject({ default: ['*'], minItems: 1 });
    expect(at('BackupTarget', 'spec.checks')).toMatchObject({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] });
    expect(at('Restore', 'spec.destination.mode')).toMatchObject({ enum: ['sandbox', 'new', 'in-place', 'download'] });
    expect(at('Backup', 'status.completionTime')).toMatchObject({ type: 'string', format: 'date-time' });
  });

  it('carries the cross-field rules as CEL validations', () => {
    const rules = (kind: ResourceKind, dotted: string): string[] => {
      let node = openApiSchema(readCrd(kind));
      for (const key of dotted.split('.')) node = (node.properties as Record<string, Node>)[key] as Node;
      return ((node['x-kubernetes-validations'] as Node[] | undefined) ?? []).map((r) => r.rule as string);
    };
    expect(rules('Restore', 'spec.destination')).toContain("self.mode != 'new' || has(self.new)");
    expect(rules('Restore', 'spec')).toContain('!has(self.destination.inPlace) || self.destination.inPlace.confirm == self.target');
    expect(rules('Restore', 'spec.source')).toHaveLength(2);
    expect(rules('BackupTarget', 'spec')).toHaveLength(2);
    expect(rules('Sandbox', 'spec')).toHaveLength(2);
  });

  it.each(RESOURCE_KINDS)('%s: a valid document (defaults applied) also passes the CRD schema; a bad one fails both', (kind) => {
    const result = validateResource(MINIMAL[kind]);
    if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('\n'));
    const ajv = createAjv({ strict: false });
    const check = ajv.compile(openApiSchema(buildCrd(kind)));
    expect(check(result.resource), JSON.stringify(check.errors)).toBe(true);
    const bad = structuredClone(result.resource) as unknown as { spec: Node };
    bad.spec.notAField = 1;
    delete (bad.spec as Node)[Object.keys(bad.spec).find((k) => k !== 'notAField') as string];
    expect(validateResource(bad).ok).toBe(false);
    expect(check(bad)).toBe(false);
  });
});

describe('emitter', () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'strata-crds-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  const run = (...args: string[]) => spawnSync(process.execPath, [emitter, ...args], { cwd: repoRoot, encoding: 'utf8' });

  it('--check passes on the repository', () => {
    const result = run('--check');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('--check exits non-zero when a file is changed, missing or stale, and writing fixes it', () => {
    cpSync(crdDir, tmp, { recursive: true });
    const store = path.join(tmp, crdFileName('BackupStore'));
    writeFileSync(store, readFileSync(store, 'utf8').replace('default: 16Mi', 'default: 32Mi'));
    unlinkSync(path.join(tmp, crdFileName('Sandbox')));
    writeFileSync(path.join(tmp, 'backups.strata.dev_snapshots.yaml'), 'kind: CustomResourceDefinition\n');
    const failed = run('--check', '--dir', tmp);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain(`${crdFileName('BackupStore')} (out of date)`);
    expect(failed.stderr).toContain(`${crdFileName('Sandbox')} (missing)`);
    expect(failed.stderr).toContain('backups.strata.dev_snapshots.yaml (no longer generated)');
    expect(run('--dir', tmp).status).toBe(0);
    expect(staleCrdFiles(tmp)).toEqual([]);
    expect(run('--check', '--dir', tmp).status).toBe(0);
  });

  it('toStructuralSchema turns const into a one-value enum and uniqueItems into a set', () => {
    expect(toStructuralSchema({ const: 'x' })).toEqual({ type: 'string', enum: ['x'] });
    expect(toStructuralSchema({ type: 'array', uniqueItems: true, items: { type: 'string', format: 'cron5' } })).toEqual({
      type: 'array',
      items: { type: 'string' },
      'x-kubernetes-list-type': 'set',
    });
    expect(toStructuralSchema({ type: 'object', additionalProperties: false, properties: { a: { type: 'integer' } } })).toEqual({
      type: 'object',
      properties: { a: { type: 'integer' } },
    });
    expect(toStructuralSchema({ type: 'object' })).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('toStructuralSchema refuses what Kubernetes cannot express', () => {
    expect(() => toStructuralSchema({ type: 'object', properties: { a: { oneOf: [{ type: 'string' }] } } })).toThrow(/keyword oneOf/);
    expect(() => toStructuralSchema({ type: 'object', properties: { a: { $ref: '#/x' } } })).toThrow(/keyword \$ref/);
    expect(() => toStructuralSchema({ type: ['string', 'integer'] })).toThrow(/single type/);
  });
});
