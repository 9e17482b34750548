/**
 * Writes one Kubernetes CustomResourceDefinition per Strata resource kind into infra/k8s/crds/,
 * converted from the JSON Schemas in proto/resources/ (see docs/strata-resources.md).
 *
 *   node proto/scripts/emit-crds.ts           write the files
 *   node proto/scripts/emit-crds.ts --check   exit 1 when the files on disk differ (CI)
 *   --dir <path>                              another directory than infra/k8s/crds (tests)
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { RESOURCE_KINDS, loadResourceSchema, type ResourceJsonSchema, type ResourceKind } from '../src/resources.ts';
import { STRATA } from '../src/strata.ts';

export const repoRoot: string = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const crdDir: string = path.join(repoRoot, 'infra/k8s/crds');

interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

interface KindNames {
  plural: string;
  singular: string;
  shortNames: string[];
  columns: PrinterColumn[];
}

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const PHASE: PrinterColumn = { name: 'Phase', type: 'string', jsonPath: '.status.phase' };
const MESSAGE: PrinterColumn = { name: 'Message', type: 'string', jsonPath: '.status.message', priority: 1 };

/** Names and `kubectl get` columns per kind. */
export const CRD_NAMES: Readonly<Record<ResourceKind, KindNames>> = {
  BackupStore: {
    plural: 'backupstores',
    singular: 'backupstore',
    shortNames: ['bstore'],
    columns: [
      { name: 'Bucket', type: 'string', jsonPath: '.spec.s3.bucket' },
      { name: 'Prefix', type: 'string', jsonPath: '.spec.prefix', priority: 1 },
      { name: 'Read-Only', type: 'boolean', jsonPath: '.spec.readOnly' },
      PHASE,
      { name: 'Last GC', type: 'date', jsonPath: '.status.lastGCTime', priority: 1 },
      MESSAGE,
      AGE,
    ],
  },
  BackupPolicy: {
    plural: 'backuppolicies',
    singular: 'backuppolicy',
    shortNames: ['bpolicy'],
    columns: [
      { name: 'Store', type: 'string', jsonPath: '.spec.store' },
      { name: 'Schedule', type: 'string', jsonPath: '.spec.full.schedule' },
      { name: 'Time Zone', type: 'string', jsonPath: '.spec.full.timeZone', priority: 1 },
      { name: 'PITR', type: 'boolean', jsonPath: '.spec.pitr.enabled' },
      PHASE,
      MESSAGE,
      AGE,
    ],
  },
  BackupTarget: {
    plural: 'backuptargets',
    singular: 'backuptarget',
    shortNames: ['btarget'],
    columns: [
      { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
      { name: 'Policy', type: 'string', jsonPath: '.spec.policy' },
      PHASE,
      { name: 'Last Success', type: 'date', jsonPath: '.status.lastSuccessTime' },
      { name: 'Next Run', type: 'date', jsonPath: '.status.nextRunTime', priority: 1 },
      { name: 'Suspended', type: 'boolean', jsonPath: '.spec.suspend', priority: 1 },
      MESSAGE,
      AGE,
    ],
  },
  Backup: {
    plural: 'backups',
    singular: 'backup',
    shortNames: ['sbackup'],
    columns: [
      { name: 'Target', type: 'string', jsonPath: '.spec.target' },
      PHASE,
      { name: 'Backup ID', type: 'string', jsonPath: '.status.backupID', priority: 1 },
      { name: 'Bytes', type: 'integer', jsonPath: '.status.compressedBytes' },
      { name: 'Completed', type: 'date', jsonPath: '.status.completionTime' },
      { name: 'Pinned', type: 'boolean', jsonPath: '.spec.pinned', priority: 1 },
      MESSAGE,
      AGE,
    ],
  },
  Restore: {
    plural: 'restores',
    singular: 'restore',
    shortNames: ['srestore'],
    columns: [
      { name: 'Target', type: 'string', jsonPath: '.spec.target' },
      { name: 'Mode', type: 'string', jsonPath: '.spec.destination.mode' },
      PHASE,
      { name: 'Sandbox', type: 'string', jsonPath: '.status.sandboxName', priority: 1 },
      { name: 'Completed', type: 'date', jsonPath: '.status.completionTime', priority: 1 },
      MESSAGE,
      AGE,
    ],
  },
  Sandbox: {
    plural: 'sandboxes',
    singular: 'sandbox',
    shortNames: ['sbx'],
    columns: [
      { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
      PHASE,
      { name: 'Owner', type: 'string', jsonPath: '.spec.owner', priority: 1 },
      { name: 'Host', type: 'string', jsonPath: '.status.host', priority: 1 },
      { name: 'Expires', type: 'date', jsonPath: '.status.expireTime' },
      MESSAGE,
      AGE,
    ],
  },
};

type Schema = Record<string, unknown>;

/** Formats the API server understands; the Strata-specific ones (cron5, iana-time-zone, regex) are dropped. */
const KUBERNETES_FORMATS = new Set(['date-time']);
/** Keywords dropped on the way to a structural schema (Kubernetes forbids or ignores them). */
const DROPPED = new Set(['$schema', '$id', '$defs', '$comment', 'title', 'examples', 'quantityRange', 'uniqueItems', 'additionalProperties', 'format', 'const']);
/** Keywords copied as they are, in this order (stable output). */
const COPIED = [
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
] as const;
const KNOWN = new Set<string>([...COPIED, ...DROPPED]);

function isObject(value: unknown): value is Schema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function typeOfValue(value: unknown): string {
  if (Number.isInteger(value)) return 'integer';
  if (Array.isArray(value)) return 'array';
  if (value === null) throw new Error('const null has no structural type');
  return typeof value;
}

/**
 * A Kubernetes structural schema from a self-contained JSON Schema node: `const` becomes a
 * one-value enum, `uniqueItems` on a list of scalars becomes `x-kubernetes-list-type: set`,
 * `additionalProperties: false` is dropped (the API server prunes unknown fields), an object with
 * neither properties nor additionalProperties preserves unknown fields, and custom formats and
 * keywords are dropped. A keyword this function does not know fails loudly.
 */
export function toStructuralSchema(node: Schema, where = '#'): Schema {
  for (const key of Object.keys(node)) {
    if (!KNOWN.has(key)) throw new Error(`${where}: keyword ${key} cannot be converted to a structural schema`);
  }
  const source: Schema = { ...node };
  if ('const' in source) {
    source.enum = [source.const];
    source.type ??= typeOfValue(source.const);
  }
  if (typeof source.format === 'string' && !KUBERNETES_FORMATS.has(source.format)) delete source.format;
  if (typeof source.type !== 'string') throw new Error(`${where}: every node of a structural schema needs a single type`);

  const out: Schema = {};
  for (const key of COPIED) {
    const value = source[key];
    if (value === undefined) continue;
    switch (key) {
      case 'properties':
        out.properties = Object.fromEntries(
          Object.entries(value as Record<string, Schema>).map(([name, sub]) => [name, toStructuralSchema(sub, `${where}/properties/${name}`)]),
        );
        break;
      case 'items':
        out.items = toStructuralSchema(value as Schema, `${where}/items`);
        break;
      case 'additionalProperties':
        if (isObject(value)) out.additionalProperties = toStructuralSchema(value, `${where}/additionalProperties`);
        break;
      default:
        out[key] = structuredClone(value);
    }
  }
  if (source.type === 'object' && out.properties === undefined && out.additionalProperties === undefined) {
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  if (source.type === 'array' && source.uniqueItems === true && out['x-kubernetes-list-type'] === undefined) {
    const itemType = isObject(source.items) ? source.items.type : undefined;
    if (itemType === 'object' || itemType === 'array') throw new Error(`${where}: uniqueItems on a list of ${String(itemType)}s has no structural equivalent`);
    out['x-kubernetes-list-type'] = 'set';
  }
  return out;
}

/** The openAPIV3Schema of one kind: metadata reduced to `type: object`, apiVersion and kind plain strings. */
export function crdSchema(kind: ResourceKind): Schema {
  const schema = loadResourceSchema(kind);
  const properties = schema.properties as Record<string, ResourceJsonSchema>;
  const spec = properties.spec;
  const status = properties.status;
  if (!spec || !status) throw new Error(`${kind}: the schema needs spec and status`);
  return {
    description: schema.description,
    type: 'object',
    required: ['spec'],
    properties: {
      apiVersion: {
        description: 'APIVersion defines the versioned schema of this representation of an object.',
        type: 'string',
      },
      kind: {
        description: 'Kind is a string value representing the REST resource this object represents.',
        type: 'string',
      },
      metadata: { type: 'object' },
      spec: toStructuralSchema(spec, `${kind}#/properties/spec`),
      status: toStructuralSchema(status, `${kind}#/properties/status`),
    },
  };
}

/** The CustomResourceDefinition of one kind. */
export function buildCrd(kind: ResourceKind): Schema {
  const names = CRD_NAMES[kind];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${names.plural}.${STRATA.apiGroup}`,
      labels: { 'app.kubernetes.io/name': STRATA.name.toLowerCase(), 'app.kubernetes.io/part-of': STRATA.name.toLowerCase() },
    },
    spec: {
      group: STRATA.apiGroup,
      names: {
        kind,
        listKind: `${kind}List`,
        plural: names.plural,
        singular: names.singular,
        shortNames: names.shortNames,
        categories: [STRATA.name.toLowerCase()],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: STRATA.apiVersion,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: names.columns,
          schema: { openAPIV3Schema: crdSchema(kind) },
        },
      ],
    },
  };
}

/** `backups.strata.dev_backupstores.yaml` (the controller-gen naming). */
export function crdFileName(kind: ResourceKind): string {
  return `${STRATA.apiGroup}_${CRD_NAMES[kind].plural}.yaml`;
}

/** Every file the emitter owns in infra/k8s/crds/, name → content. */
export function renderCrdFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const kind of RESOURCE_KINDS) {
    const header =
      `# ${kind} (${STRATA.apiGroup}/${STRATA.apiVersion}). Generated by proto/scripts/emit-crds.ts from\n` +
      `# proto/resources/${kind.toLowerCase()}.schema.json; do not edit. Regenerate with: node proto/scripts/emit-crds.ts\n`;
    files.set(crdFileName(kind), header + stringify(buildCrd(kind), { lineWidth: 0 }));
  }
  files.set(
    'kustomization.yaml',
    '# Generated by proto/scripts/emit-crds.ts; do not edit.\n' +
      stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: RESOURCE_KINDS.map(crdFileName) }, { lineWidth: 0 }),
  );
  return files;
}

/** Files that differ from what the emitter would write: missing, changed, or stale generated CRDs. */
export function staleCrdFiles(dir = crdDir): string[] {
  const expected = renderCrdFiles();
  const stale: string[] = [];
  for (const [name, content] of expected) {
    const file = path.join(dir, name);
    if (!existsSync(file)) stale.push(`${name} (missing)`);
    else if (readFileSync(file, 'utf8') !== content) stale.push(`${name} (out of date)`);
  }
  if (existsSync(dir)) {
    const prefix = `${STRATA.apiGroup}_`;
    for (const name of readdirSync(dir)) {
      if (name.startsWith(prefix) && name.endsWith('.yaml') && !expected.has(name)) stale.push(`${name} (no longer generated)`);
    }
  }
  return stale;
}

function main(argv: readonly string[]): number {
  const dirAt = argv.indexOf('--dir');
  const dir = dirAt >= 0 && argv[dirAt + 1] ? path.resolve(argv[dirAt + 1] as string) : crdDir;
  const rel = path.relative(process.cwd(), dir) || '.';
  if (argv.includes('--check')) {
    const stale = staleCrdFiles(dir);
    if (stale.length > 0) {
      console.error(`CRDs in ${rel} do not match proto/resources/*.schema.json:\n${stale.map((s) => `  ${s}`).join('\n')}\nRun: node proto/scripts/emit-crds.ts`);
      return 1;
    }
    console.log(`CRDs in ${rel} are up to date.`);
    return 0;
  }
  mkdirSync(dir, { recursive: true });
  const files = renderCrdFiles();
  for (const [name, content] of files) writeFileSync(path.join(dir, name), content);
  for (const name of readdirSync(dir)) {
    if (name.startsWith(`${STRATA.apiGroup}_`) && name.endsWith('.yaml') && !files.has(name)) unlinkSync(path.join(dir, name));
  }
  console.log(`Wrote ${RESOURCE_KINDS.length} CRDs and kustomization.yaml to ${rel}.`);
  return 0;
}

if (import.meta.main) process.exitCode = main(process.argv.slice(2));
