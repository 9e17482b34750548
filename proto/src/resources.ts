import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CronExpressionParser } from 'cron-parser';
import { createAjv, type JsonSchemaError, type JsonSchemaValidateFunction, type JsonSchemaValidator } from './ajv.ts';
import { STRATA } from './strata.ts';
import type { StrataEngine } from './strata-jobs.ts';
import { BYTE_QUANTITY_PATTERN, describeInput, parseDuration, parseQuantity } from './units.ts';

/**
 * Strata's declarative resources (spec part 2.2): JSON Schemas (2020-12) under `proto/resources/`,
 * a validator that applies defaults and explains errors in plain English, and the parsers for the
 * duration and byte-quantity strings the resources use. The CRDs in `infra/k8s/crds/` are generated
 * from the same schemas by `proto/scripts/emit-crds.ts`. See docs/strata-resources.md.
 */

export { BYTE_QUANTITY_PATTERN, DURATION_PATTERN, formatDuration, parseDuration, parseQuantity } from './units.ts';

/** `backups.strata.dev/v1alpha1`. */
export const RESOURCE_API_VERSION = `${STRATA.apiGroup}/${STRATA.apiVersion}` as const;

/** The six kinds, in dependency order (a store before the policies that use it, …). */
export const RESOURCE_KINDS = ['BackupStore', 'BackupPolicy', 'BackupTarget', 'Backup', 'Restore', 'Sandbox'] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];

export function isResourceKind(value: unknown): value is ResourceKind {
  return typeof value === 'string' && (RESOURCE_KINDS as readonly string[]).includes(value);
}

// ---------------------------------------------------------------------------------------------
// Document types (as returned by validateResource: defaults applied)
// ---------------------------------------------------------------------------------------------

export interface ResourceMetadata {
  name: string;
  /** Filled with `default` when missing. */
  namespace: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  generateName?: string;
  selfLink?: string;
  finalizers?: string[];
  ownerReferences?: Record<string, unknown>[];
  managedFields?: Record<string, unknown>[];
}

export interface ResourceCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** The fields every status embeds. */
export interface ResourceStatusBase {
  phase?: string;
  message?: string;
  observedGeneration?: number;
  conditions?: ResourceCondition[];
}

export interface ResourceSecretReference {
  /** Defaults to the referencing object's namespace (resolved by the controller, not filled in). */
  namespace?: string;
  name: string;
  optional?: boolean;
}

export interface ResourceCredentialsSecretRef {
  name: string;
  usernameKey: string;
  passwordKey: string;
}

export interface ResourceDatabaseEndpoint {
  host: string;
  /** Defaults to the engine's standard port. */
  port?: number;
}

export interface ResourceSQLCheck {
  name: string;
  database?: string;
  sql: string;
}

export interface ResourceBackupRef {
  name?: string;
  id?: string;
  time?: string;
  phase?: string;
}

export interface ResourceProgress {
  stage?: string;
  bytes?: number;
  totalBytes?: number;
  updatedAt?: string;
}

export interface ResourceCheckResult {
  name?: string;
  passed?: boolean;
  message?: string;
}

/** Fields shared by all six documents. */
export interface ResourceDocument<K extends ResourceKind, Spec, Status> {
  apiVersion: typeof RESOURCE_API_VERSION;
  kind: K;
  metadata: ResourceMetadata;
  spec: Spec;
  status?: Status;
}

// BackupStore

export interface BackupStoreSpec {
  s3: {
    endpoint: string;
    region: string;
    bucket: string;
    pathStyle?: boolean;
    credentialsSecret: {
      namespace?: string;
      name: string;
      accessKeyIdKey: string;
      secretAccessKeyKey: string;
    };
    disableConditionalPut?: boolean;
  };
  prefix?: string;
  encryption: {
    ageRecipients: string[];
    identitySecret: ResourceSecretReference;
    catalogRecipients?: string[];
    catalogIdentitySecret?: ResourceSecretReference;
  };
  upload: { partSize: string; concurrency: number };
  readOnly?: boolean;
}

export interface BackupStoreStatus extends ResourceStatusBase {
  lastCheckTime?: string;
  lastGCTime?: string;
  lastImportTime?: string;
  lastGCDeleted?: number;
  lastImportCreated?: number;
  lastGCPlanKey?: string;
}

export interface BackupStoreResource extends ResourceDocument<'BackupStore', BackupStoreSpec, BackupStoreStatus> {
  kind: 'BackupStore';
}

// BackupPolicy

export type BackupCompressionAlgorithm = 'zstd' | 'none';
export type BackupCompressionLevel = 'fastest' | 'default' | 'better' | 'best';

export interface BackupPolicySpec {
  store: string;
  full: { schedule: string; timeZone: string; jitter?: string; startingDeadline: string };
  pitr: { enabled?: boolean; window?: string; partialInterval: string };
  retain?: { daily?: number; weekly?: number; monthly?: number; yearly?: number };
  limits?: {
    perHost?: number;
    perTarget?: number;
    global?: number;
    priority?: number;
    bandwidth?: string;
    restoreBandwidth?: string;
  };
  loadGuard?: {
    maxActiveConnections?: number;
    maxReplicationLagSeconds?: number;
    maxLongTransactionSeconds?: number;
    maxPostpones?: number;
    postponeFor?: string;
  };
  verify: {
    schedule?: string;
    /** When omitted the verify schedule runs in `full.timeZone`. */
    timeZone?: string;
    checks?: string[];
    randomPointInTime: boolean;
  };
  jobs: { activeDeadline?: string; backoffLimit?: number; stallTimeout: string; cpu?: string; memory?: string };
  compression: { algorithm: BackupCompressionAlgorithm; level: BackupCompressionLevel; threads?: number };
  sandbox?: { defaultTTL?: string; maxTTL?: string };
  keepBackupObjects: number;
}

export type BackupPolicyStatus = ResourceStatusBase;

export interface BackupPolicyResource extends ResourceDocument<'BackupPolicy', BackupPolicySpec, BackupPolicyStatus> {
  kind: 'BackupPolicy';
}

// BackupTarget

export type BackupTargetScopeMode = 'physical' | 'logical' | '';

export interface BackupTargetSpec {
  engine: StrataEngine;
  endpoint: ResourceDatabaseEndpoint;
  databases: string[];
  credentials: { secretRef: ResourceCredentialsSecretRef };
  policy: string;
  /** Field-by-field override of the policy's pitr; no defaults of its own. */
  pitr?: { enabled?: boolean; window?: string; partialInterval?: string };
  scope?: {
    mode?: BackupTargetScopeMode;
    excludeData?: string[];
    excludeTables?: string[];
    queries?: ResourceSQLCheck[];
  };
  checks?: ResourceSQLCheck[];
  mask?: string[];
  /** `enabled` has no schema default: omitted means on for mysql, off otherwise. */
  previews: { enabled?: boolean; rows: number; logical: boolean; maxValueLength: number };
  sandbox?: {
    image?: string;
    sizeLimit?: string;
    storageClass?: string;
    cpu?: string;
    memory?: string;
    postRestoreSQL?: string[];
  };
  exactCounts: { enabled?: boolean; maxRows: number; timeout: string };
  suspend?: boolean;
}

export interface BackupTargetStatus extends ResourceStatusBase {
  lastBackup?: ResourceBackupRef;
  lastVerification?: ResourceBackupRef;
  lastSuccessTime?: string;
  lastScheduleTime?: string;
  nextRunTime?: string;
  lastVerifyScheduleTime?: string;
  pitr?: {
    enabled?: boolean;
    chainBroken?: boolean;
    streamerReady?: boolean;
    brokenSince?: string;
    windowStart?: string;
    windowEnd?: string;
    replicationCheckedAt?: string;
    brokenReason?: string;
    lastSegment?: string;
    replicationDenied?: string;
    replicationFix?: string;
    lagSeconds?: number;
  };
  serverVersion?: string;
  handledBackupNow?: string;
  handledVerifyNow?: string;
  prefix?: string;
  storeBytes?: number;
}

export interface BackupTargetResource extends ResourceDocument<'BackupTarget', BackupTargetSpec, BackupTargetStatus> {
  kind: 'BackupTarget';
}

// Backup

export interface BackupSpec {
  target: string;
  reason?: string;
  requestedBy?: string;
  backupID?: string;
  pinned?: boolean;
  pinReason?: string;
  pinExpires?: string;
  skipLoadGuard?: boolean;
}

export interface BackupStatus extends ResourceStatusBase {
  backupID?: string;
  manifestKey?: string;
  startLSN?: string;
  endLSN?: string;
  binlogFile?: string;
  gtidSet?: string;
  jobName?: string;
  serverKey?: string;
  queuedTime?: string;
  startTime?: string;
  completionTime?: string;
  verifiedTime?: string;
  postponedUntil?: string;
  bytes?: number;
  compressedBytes?: number;
  durationSeconds?: number;
  binlogPos?: number;
  postpones?: number;
  attempts?: number;
  priority?: number;
  inventorySummary?: {
    databases?: number;
    tables?: number;
    rowsEstimate?: number;
    schemaHash?: string;
    migrationVersion?: string;
  };
  tiers?: string[];
  warnings?: string[];
  verified?: boolean;
  pinSynced?: boolean;
  progress?: ResourceProgress;
}

export interface BackupResource extends ResourceDocument<'Backup', BackupSpec, BackupStatus> {
  kind: 'Backup';
}

// Restore

export type RestoreDestinationMode = 'sandbox' | 'new' | 'in-place' | 'download';

export interface RestoreSpec {
  target: string;
  source: { backupID?: string; time?: string; latest?: boolean; targetNamespace?: string };
  destination: {
    mode: RestoreDestinationMode;
    sandbox?: { name?: string; ttl?: string; expose?: boolean; deleteAfter?: boolean };
    new?: { endpoint: ResourceDatabaseEndpoint; database: string; credentialsSecretRef: ResourceCredentialsSecretRef };
    inPlace?: { confirm: string; credentialsSecretRef: ResourceCredentialsSecretRef; skipSafetyBackup?: boolean };
    tables?: string[];
  };
  runChecks: boolean;
  checks?: string[];
  reason?: string;
  requestedBy?: string;
}

export interface RestoreStatus extends ResourceStatusBase {
  plan?: { baseBackupID?: string; segments?: number; targetTime?: string; bytes?: number; message?: string };
  sandboxName?: string;
  safetyBackup?: string;
  jobName?: string;
  downloadURL?: string;
  attempts?: number;
  durationSeconds?: number;
  startTime?: string;
  completionTime?: string;
  downloadExpires?: string;
  checks?: ResourceCheckResult[];
  progress?: ResourceProgress;
}

export interface RestoreResource extends ResourceDocument<'Restore', RestoreSpec, RestoreStatus> {
  kind: 'Restore';
}

// Sandbox

export interface SandboxSpec {
  engine: StrataEngine;
  image?: string;
  owner?: string;
  sizeLimit?: string;
  storageClass?: string;
  cpu?: string;
  memory?: string;
  ttl?: string;
  source?: {
    targetNamespace?: string;
    target?: string;
    backupID?: string;
    time?: string;
    restoreRef?: { namespace?: string; name: string };
  };
  expose?: boolean;
  physical?: boolean;
  major?: number;
  extensions?: string[];
  resetGeneration?: number;
}

export interface SandboxStatus extends ResourceStatusBase {
  namespace?: string;
  host?: string;
  database?: string;
  credentialsSecret?: string;
  route?: string;
  restoreName?: string;
  port?: number;
  observedResetGeneration?: number;
  receiverPort?: number;
  expireTime?: string;
  readyTime?: string;
  expiringSince?: string;
}

export interface SandboxResource extends ResourceDocument<'Sandbox', SandboxSpec, SandboxStatus> {
  kind: 'Sandbox';
}

export type AnyResource =
  | BackupStoreResource
  | BackupPolicyResource
  | BackupTargetResource
  | BackupResource
  | RestoreResource
  | SandboxResource;

/** The document type of one kind. */
export type ResourceOfKind<K extends ResourceKind> = Extract<AnyResource, { kind: K }>;

// ---------------------------------------------------------------------------------------------
// Custom formats: cron5, iana-time-zone, regex
// ---------------------------------------------------------------------------------------------

/**
 * Why `expression` is not an acceptable schedule, or undefined when it is: exactly five fields
 * (minute hour day-of-month month day-of-week) that cron-parser accepts. Jenkins-style `H` hashes
 * are refused (their value would depend on a seed; use the policy's `jitter` instead).
 */
export function cronProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5) return 'is not a 5-field cron expression';
  if (fields.some((f) => /(?:^|[,/-])H/.test(f))) return 'is not a valid cron expression: H (hashed) values are not supported';
  try {
    CronExpressionParser.parse(fields.join(' '), { tz: 'UTC' });
  } catch (error) {
    return `is not a valid cron expression: ${(error as Error).message}`;
  }
  return undefined;
}

export function isCron5(expression: string): boolean {
  return cronProblem(expression) === undefined;
}

let timeZones: Set<string> | undefined;

/**
 * True for `UTC` and every zone of `Intl.supportedValuesOf('timeZone')`; also for other IANA names
 * the runtime resolves (links such as `Europe/Kiev`, `Etc/GMT+1`, `US/Pacific`) when written with
 * their capitalisation. Offsets (`+01:00`), lower-case names (`utc`) and unknown names are refused.
 */
export function isIanaTimeZone(name: string): boolean {
  timeZones ??= new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);
  if (timeZones.has(name)) return true;
  if (!/^[A-Z][A-Za-z0-9_+-]*(\/[A-Z0-9][A-Za-z0-9_+-]*)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function regexProblem(source: string): string | undefined {
  try {
    new RegExp(source);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

// ---------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------

/** A JSON Schema object as read from `proto/resources/`. */
export type ResourceJsonSchema = { [keyword: string]: unknown };

const resourcesDir = new URL('../resources/', import.meta.url);

/** Absolute path of the schema of shared definitions. */
export const commonResourceSchemaPath: string = fileURLToPath(new URL('common.schema.json', resourcesDir));

/** Absolute path of one kind's JSON Schema (`proto/resources/<kind in lower case>.schema.json`). */
export function resourceSchemaPath(kind: ResourceKind): string {
  return fileURLToPath(new URL(`${kind.toLowerCase()}.schema.json`, resourcesDir));
}

function readJson(path: string): ResourceJsonSchema {
  return JSON.parse(readFileSync(path, 'utf8')) as ResourceJsonSchema;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** common.schema.json as stored (frozen). */
export const COMMON_RESOURCE_SCHEMA: Readonly<ResourceJsonSchema> = deepFreeze(readJson(commonResourceSchemaPath));

/**
 * Each kind's schema exactly as stored (frozen): it references `common.schema.json#/$defs/...`
 * by `$ref`. For a self-contained copy use `loadResourceSchema(kind)`.
 */
export const RESOURCE_SCHEMAS: Readonly<Record<ResourceKind, Readonly<ResourceJsonSchema>>> = deepFreeze(
  Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, readJson(resourceSchemaPath(kind))])) as Record<ResourceKind, ResourceJsonSchema>,
);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function resolvePointer(doc: unknown, pointer: string): unknown {
  if (pointer === '' || pointer === '/') return doc;
  let node: unknown = doc;
  for (const raw of pointer.replace(/^\//, '').split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isPlainObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * A copy of `schema` with every `$ref` replaced by what it points to (keywords beside a `$ref`
 * win over the target's), `$defs` dropped. `documents` maps schema `$id`s to schemas; a `$ref` is
 * resolved against the `$id` of the document it appears in.
 */
export function inlineSchemaRefs(schema: ResourceJsonSchema, documents: ReadonlyMap<string, ResourceJsonSchema>): ResourceJsonSchema {
  const rootId = typeof schema.$id === 'string' ? schema.$id : 'urn:strata:schema';
  const lookup = (id: string): ResourceJsonSchema | undefined => documents.get(id) ?? (id === rootId ? schema : undefined);
  const VALUES = new Set(['default', 'const', 'enum', 'examples']);
  const visit = (node: unknown, base: string, stack: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => visit(item, base, stack));
    if (!isPlainObject(node)) return node;
    const out: Record<string, unknown> = {};
    if (typeof node.$ref === 'string') {
      const url = new URL(node.$ref, base);
      const docId = url.href.slice(0, url.href.length - url.hash.length);
      const doc = lookup(docId);
      if (!doc) throw new Error(`schema ${base}: cannot resolve $ref ${node.$ref}`);
      if (stack.includes(url.href)) throw new Error(`schema ${base}: circular $ref ${node.$ref}`);
      const target = resolvePointer(doc, decodeURIComponent(url.hash.slice(1)));
      if (!isPlainObject(target)) throw new Error(`schema ${base}: $ref ${node.$ref} does not point at a schema`);
      const inlined = visit(target, docId, [...stack, url.href]) as Record<string, unknown>;
      delete inlined.$id;
      delete inlined.$schema;
      Object.assign(out, inlined);
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' || key === '$defs') continue;
      if (VALUES.has(key)) out[key] = structuredClone(value);
      else if (key === 'properties' && isPlainObject(value)) {
        out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, visit(sub, base, stack)]));
      } else out[key] = visit(value, base, stack);
    }
    return out;
  };
  return visit(schema, rootId, []) as ResourceJsonSchema;
}

let schemaDocuments: Map<string, ResourceJsonSchema> | undefined;

function documentsById(): Map<string, ResourceJsonSchema> {
  if (!schemaDocuments) {
    schemaDocuments = new Map();
    for (const doc of [COMMON_RESOURCE_SCHEMA, ...Object.values(RESOURCE_SCHEMAS)]) {
      schemaDocuments.set(String(doc.$id), doc as ResourceJsonSchema);
    }
  }
  return schemaDocuments;
}

/**
 * A fresh, self-contained copy of one kind's schema: every `$ref` (to its own `$defs` or to
 * common.schema.json) inlined, no `$defs` left. Still JSON Schema 2020-12 with Strata's custom
 * formats (`cron5`, `iana-time-zone`, `regex`) and the `quantityRange` keyword.
 */
export function loadResourceSchema(kind: ResourceKind): ResourceJsonSchema {
  if (!isResourceKind(kind)) throw new Error(`unknown resource kind ${describeInput(kind)}`);
  return inlineSchemaRefs(structuredClone(RESOURCE_SCHEMAS[kind]) as ResourceJsonSchema, documentsById());
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

export interface ResourceValidationError {
  /** Dotted field path, e.g. `spec.full.schedule`, `spec.encryption.ageRecipients[0]`; '' for the document itself. */
  path: string;
  /** An English sentence that starts with the path, e.g. `spec.compression.threads: must be at most 64`. */
  message: string;
}

export type ResourceValidation = { ok: true; resource: AnyResource } | { ok: false; errors: ResourceValidationError[] };

interface KeywordDefinition {
  keyword: string;
  type?: string | string[];
  schemaType?: string | string[];
  metaSchema?: object;
  validate: (schema: never, data: never) => boolean;
}

/** The keywords Kubernetes reads and Ajv only carries (annotations). */
export const KUBERNETES_SCHEMA_KEYWORDS = ['x-kubernetes-validations', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys'] as const;

function quantityRangeProblem(range: { minimum?: string; maximum?: string }, value: string): string | undefined {
  let bytes: number;
  try {
    bytes = parseQuantity(value);
  } catch {
    return undefined; // the pattern reports it
  }
  if (range.minimum !== undefined && bytes < parseQuantity(range.minimum)) return `must be at least ${range.minimum} (got ${JSON.stringify(value)})`;
  if (range.maximum !== undefined && bytes > parseQuantity(range.maximum)) return `must be at most ${range.maximum} (got ${JSON.stringify(value)})`;
  return undefined;
}

/**
 * An Ajv 2020 instance that knows Strata's resource schemas: strict, all errors, defaults applied
 * (`useDefaults`), verbose errors (for messages), formats `cron5`, `iana-time-zone`, `regex`, the
 * keyword `quantityRange` and the Kubernetes annotation keywords; common.schema.json is added.
 */
export function createResourceAjv(): JsonSchemaValidator {
  const ajv = createAjv({ useDefaults: true, verbose: true });
  ajv.addFormat('cron5', isCron5);
  ajv.addFormat('iana-time-zone', isIanaTimeZone);
  ajv.addFormat('regex', (value: string) => regexProblem(value) === undefined);
  for (const keyword of KUBERNETES_SCHEMA_KEYWORDS) ajv.addKeyword(keyword);
  const withDefinitions = ajv as unknown as { addKeyword(definition: KeywordDefinition): unknown };
  withDefinitions.addKeyword({
    keyword: 'quantityRange',
    type: 'string',
    schemaType: 'object',
    metaSchema: {
      type: 'object',
      additionalProperties: false,
      properties: { minimum: { type: 'string', pattern: BYTE_QUANTITY_PATTERN.source }, maximum: { type: 'string', pattern: BYTE_QUANTITY_PATTERN.source } },
    },
    validate: ((range: { minimum?: string; maximum?: string }, value: string) => quantityRangeProblem(range, value) === undefined) as KeywordDefinition['validate'],
  });
  ajv.addSchema(structuredClone(COMMON_RESOURCE_SCHEMA) as object);
  return ajv;
}

let validators: Map<ResourceKind, JsonSchemaValidateFunction> | undefined;

function validatorFor(kind: ResourceKind): JsonSchemaValidateFunction {
  if (!validators) {
    const ajv = createResourceAjv();
    validators = new Map(RESOURCE_KINDS.map((k) => [k, ajv.compile(structuredClone(RESOURCE_SCHEMAS[k]) as object)]));
  }
  return validators.get(kind) as JsonSchemaValidateFunction;
}

/** What a schema pattern means, for error messages. Every pattern in the schemas has an entry (tested). */
const COMMON_DEFS = COMMON_RESOURCE_SCHEMA.$defs as Record<string, { pattern?: string }>;
const DNS_LABEL_TEXT = "is not a valid name (a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)";
export const PATTERN_DESCRIPTIONS: ReadonlyMap<string, string> = new Map([
  [String(COMMON_DEFS.Duration?.pattern), 'is not a duration (a number with a unit ns, us, ms, s, m, h, d or w, e.g. 90s, 1h30m, 7d)'],
  [String(COMMON_DEFS.ByteQuantity?.pattern), 'is not a byte quantity (a number with an optional k, M, G, T, Ki, Mi, Gi or Ti suffix, e.g. 16Mi)'],
  [String(COMMON_DEFS.ResourceQuantity?.pattern), 'is not a Kubernetes resource quantity (e.g. 500m, 2, 512Mi, 4Gi)'],
  [String(COMMON_DEFS.DNSLabel?.pattern), DNS_LABEL_TEXT],
  [String(COMMON_DEFS.DNSSubdomain?.pattern), "is not a valid name (a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)"],
  [String(COMMON_DEFS.SecretKey?.pattern), "is not a valid Secret key (letters, digits, '-', '_' and '.')"],
  ['^age1[02-9ac-hj-np-z]{58}$', 'is not an age recipient (age1 followed by 58 lowercase bech32 characters)'],
  ['^https?://[^\\s]+$', 'is not an http:// or https:// URL'],
  ['^(inventory-matches|schema-matches|row-estimates-within-[0-9]+pct|target-checks)$', 'is not a built-in check (inventory-matches, schema-matches, row-estimates-within-<N>pct, target-checks)'],
  ['^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$', DNS_LABEL_TEXT.replace('a DNS-1123 label:', 'empty or a DNS-1123 label:')],
]);

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean (true or false)',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

function jsonValue(value: unknown, max = 80): string {
  const text = describeInput(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function joinPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  const segment = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? key : JSON.stringify(key);
  if (segment.startsWith('"')) return `${parent}[${segment}]`;
  return parent === '' ? segment : `${parent}.${segment}`;
}

/** `/spec/encryption/ageRecipients/0` → `spec.encryption.ageRecipients[0]` (array indexes where the data has arrays). */
function dottedPath(pointer: string, data: unknown): string {
  if (pointer === '') return '';
  let path = '';
  let node: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node) && /^\d+$/.test(key)) {
      path = joinPath(path, Number(key));
      node = node[Number(key)];
    } else {
      path = joinPath(path, key);
      node = isPlainObject(node) ? node[key] : undefined;
    }
  }
  return path;
}

function problem(path: string, text: string): ResourceValidationError {
  return { path, message: path === '' ? text : `${path}: ${text}` };
}

function describeAjvError(error: JsonSchemaError & { data?: unknown; schema?: unknown; parentSchema?: Record<string, unknown> }, doc: unknown): ResourceValidationError | undefined {
  const at = dottedPath(error.instancePath, doc);
  const params = error.params;
  const data = error.data;
  switch (error.keyword) {
    case 'required':
      return problem(joinPath(at, String(params.missingProperty)), 'is required');
    case 'additionalProperties':
      return problem(joinPath(at, String(params.additionalProperty)), 'is not a known field');
    case 'type': {
      const types = String(params.type).split(',');
      return problem(at, `must be ${types.map((t) => TYPE_WORDS[t] ?? t).join(' or ')} (got ${jsonValue(data)})`);
    }
    case 'const':
      return problem(at, `must be ${jsonValue(params.allowedValue)} (got ${jsonValue(data)})`);
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map((v) => jsonValue(v));
      return problem(at, `${jsonValue(data)} is not one of ${allowed.join(', ')}`);
    }
    case 'pattern': {
      const pattern = String(params.pattern);
      return problem(at, `${jsonValue(data)} ${PATTERN_DESCRIPTIONS.get(pattern) ?? `does not match the pattern ${pattern}`}`);
    }
    case 'format': {
      const value = String(data);
      switch (params.format) {
        case 'cron5':
          return problem(at, `${jsonValue(value)} ${cronProblem(value) ?? 'is not a valid cron expression'}`);
        case 'iana-time-zone':
          return problem(at, `${jsonValue(value)} is not an IANA time zone (e.g. UTC, Europe/Berlin, America/New_York)`);
        case 'date-time':
          return problem(at, `${jsonValue(value)} is not an RFC 3339 date-time (e.g. 2026-01-31T02:00:00Z)`);
        case 'regex':
          return problem(at, `${jsonValue(value)} is not a valid regular expression: ${regexProblem(value) ?? 'invalid'}`);
        default:
          return problem(at, `${jsonValue(value)} is not a valid ${String(params.format)}`);
      }
    }
    case 'minimum':
      return problem(at, `must be at least ${String(params.limit)}`);
    case 'maximum':
      return problem(at, `must be at most ${String(params.limit)}`);
    case 'exclusiveMinimum':
      return problem(at, `must be greater than ${String(params.limit)}`);
    case 'exclusiveMaximum':
      return problem(at, `must be less than ${String(params.limit)}`);
    case 'minLength':
      return problem(at, params.limit === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters long`);
    case 'maxLength':
      return problem(at, `must be at most ${String(params.limit)} characters long (got ${String(typeof data === 'string' ? data.length : '?')})`);
    case 'minItems':
      return problem(at, params.limit === 1 ? 'must list at least one item' : `must list at least ${String(params.limit)} items`);
    case 'maxItems':
      return problem(at, `must list at most ${String(params.limit)} items`);
    case 'uniqueItems': {
      const i = Number(params.i);
      const j = Number(params.j);
      const item = Array.isArray(data) ? data[i] : undefined;
      return problem(joinPath(at, Math.max(i, j)), `${jsonValue(item)} is listed twice (items ${Math.min(i, j)} and ${Math.max(i, j)})`);
    }
    case 'quantityRange':
      return problem(at, quantityRangeProblem(error.schema as { minimum?: string; maximum?: string }, String(data)) ?? 'is out of range');
    default:
      return problem(at, error.message ?? `fails ${error.keyword}`);
  }
}

// Cross-field rules. Each mirrors an `x-kubernetes-validations` rule in the schema (so the API server
// enforces it too) or, where CEL cannot express it (durations with d and w), exists only here.

type Doc = Record<string, unknown>;

function obj(value: unknown): Doc | undefined {
  return isPlainObject(value) ? value : undefined;
}

function nonEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

function safeDuration(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return parseDuration(value);
  } catch {
    return undefined;
  }
}

function duplicateNames(list: unknown, path: string, what: string): ResourceValidationError[] {
  if (!Array.isArray(list)) return [];
  const seen = new Set<string>();
  const errors: ResourceValidationError[] = [];
  list.forEach((item, index) => {
    const name = obj(item)?.name;
    if (typeof name !== 'string') return;
    if (seen.has(name)) errors.push(problem(`${path}[${index}].name`, `${JSON.stringify(name)} is already used by another ${what}`));
    seen.add(name);
  });
  return errors;
}

const CROSS_FIELD_RULES: Record<ResourceKind, (spec: Doc) => ResourceValidationError[]> = {
  BackupStore: () => [],
  BackupPolicy: (spec) => {
    const sandbox = obj(spec.sandbox);
    const defaultTTL = safeDuration(sandbox?.defaultTTL);
    const maxTTL = safeDuration(sandbox?.maxTTL);
    if (defaultTTL !== undefined && maxTTL !== undefined && defaultTTL > maxTTL) {
      return [problem('spec.sandbox.defaultTTL', `must not be longer than maxTTL (${String(sandbox?.maxTTL)})`)];
    }
    return [];
  },
  BackupTarget: (spec) => {
    const errors: ResourceValidationError[] = [];
    const scope = obj(spec.scope);
    const previews = obj(spec.previews);
    if (spec.engine === 'mysql' && scope?.mode === 'physical') {
      errors.push(problem('spec.scope.mode', 'mysql backups are always logical; "physical" is not allowed'));
    }
    if (spec.engine !== 'postgres' && previews?.logical === true) {
      errors.push(problem('spec.previews.logical', `is for postgres targets only (engine is ${jsonValue(spec.engine)})`));
    }
    if (scope?.mode === 'physical') {
      for (const field of ['excludeData', 'excludeTables'] as const) {
        if (nonEmptyList(scope[field])) errors.push(problem(`spec.scope.${field}`, 'applies to logical backups only, but scope.mode is "physical"'));
      }
    }
    errors.push(...duplicateNames(spec.checks, 'spec.checks', 'check'));
    errors.push(...duplicateNames(scope?.queries, 'spec.scope.queries', 'query'));
    return errors;
  },
  Backup: () => [],
  Restore: (spec) => {
    const errors: ResourceValidationError[] = [];
    const source = obj(spec.source);
    if (source) {
      const latest = source.latest === true;
      if (source.backupID === undefined && source.time === undefined && !latest) {
        errors.push(problem('spec.source', 'must set backupID, time or latest: true'));
      }
      if (latest && source.time !== undefined) errors.push(problem('spec.source.time', 'cannot be combined with latest: true'));
    }
    const destination = obj(spec.destination);
    if (destination && typeof destination.mode === 'string') {
      const mode = destination.mode;
      const subObjects = [
        ['sandbox', 'sandbox'],
        ['new', 'new'],
        ['inPlace', 'in-place'],
      ] as const;
      for (const [field, fieldMode] of subObjects) {
        if (field !== 'sandbox' && mode === fieldMode && destination[field] === undefined) {
          errors.push(problem(`spec.destination.${field}`, `is required when mode is "${fieldMode}"`));
        }
        if (destination[field] !== undefined && mode !== fieldMode) {
          errors.push(problem(`spec.destination.${field}`, `is only allowed when mode is "${fieldMode}" (mode is ${jsonValue(mode)})`));
        }
      }
      const confirm = obj(destination.inPlace)?.confirm;
      if (typeof confirm === 'string' && typeof spec.target === 'string' && confirm !== spec.target) {
        errors.push(problem('spec.destination.inPlace.confirm', `must equal the target name ${JSON.stringify(spec.target)} (got ${JSON.stringify(confirm)})`));
      }
    }
    return errors;
  },
  Sandbox: (spec) => {
    const errors: ResourceValidationError[] = [];
    if (spec.physical === true && spec.engine !== 'postgres') {
      errors.push(problem('spec.physical', `is for postgres sandboxes only (engine is ${jsonValue(spec.engine)})`));
    }
    if (spec.major !== undefined && spec.engine !== 'postgres') {
      errors.push(problem('spec.major', `is for postgres sandboxes only (engine is ${jsonValue(spec.engine)})`));
    }
    return errors;
  },
};

function kindHint(kind: string): string {
  const match = RESOURCE_KINDS.find((k) => k.toLowerCase() === kind.toLowerCase());
  return match ? ` Did you mean ${match}?` : '';
}

/**
 * Validates one Strata resource document (already parsed from YAML or JSON). On success returns a
 * copy with every schema default applied and `metadata.namespace` filled with `default` when
 * missing; the input is never modified. On failure returns every problem found, each with a dotted
 * path and a sentence such as `spec.full.schedule: "* * *" is not a 5-field cron expression`.
 * A wrong `apiVersion` or an unknown `kind` is reported on its own.
 */
export function validateResource(doc: unknown): ResourceValidation {
  if (!isPlainObject(doc)) {
    return { ok: false, errors: [problem('', `a resource must be an object with apiVersion, kind, metadata and spec (got ${jsonValue(doc)})`)] };
  }
  const header: ResourceValidationError[] = [];
  if (doc.apiVersion === undefined) {
    header.push(problem('apiVersion', `is required (expected ${JSON.stringify(RESOURCE_API_VERSION)})`));
  } else if (doc.apiVersion !== RESOURCE_API_VERSION) {
    header.push(problem('apiVersion', `${jsonValue(doc.apiVersion)} is not supported; Strata resources use ${JSON.stringify(RESOURCE_API_VERSION)}`));
  }
  if (doc.kind === undefined) {
    header.push(problem('kind', `is required (one of ${RESOURCE_KINDS.join(', ')})`));
  } else if (!isResourceKind(doc.kind)) {
    const hint = typeof doc.kind === 'string' ? kindHint(doc.kind) : '';
    header.push(problem('kind', `${jsonValue(doc.kind)} is not a Strata resource kind (expected one of ${RESOURCE_KINDS.join(', ')}).${hint}`));
  }
  if (header.length > 0) return { ok: false, errors: header };

  const kind = doc.kind as ResourceKind;
  const copy = structuredClone(doc);
  const validate = validatorFor(kind);
  const valid = validate(copy);
  const errors: ResourceValidationError[] = [];
  const seen = new Set<string>();
  const add = (error: ResourceValidationError | undefined): void => {
    if (!error || seen.has(error.message)) return;
    seen.add(error.message);
    errors.push(error);
  };
  if (!valid) for (const error of validate.errors ?? []) add(describeAjvError(error, copy));
  const spec = obj(copy.spec);
  if (spec) for (const error of CROSS_FIELD_RULES[kind](spec)) add(error);
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, resource: copy as unknown as AnyResource };
}

/** Like validateResource, but throws an Error listing every problem. */
export function parseResource(doc: unknown): AnyResource {
  const result = validateResource(doc);
  if (result.ok) return result.resource;
  throw new Error(`invalid Strata resource:\n${result.errors.map((e) => `  ${e.message}`).join('\n')}`);
}
