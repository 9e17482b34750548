import { describe, expect, it } from 'vitest';
import {
  COMMON_RESOURCE_SCHEMA,
  PATTERN_DESCRIPTIONS,
  RESOURCE_API_VERSION,
  RESOURCE_KINDS,
  RESOURCE_SCHEMAS,
  cronProblem,
  formatDuration,
  isIanaTimeZone,
  loadResourceSchema,
  parseDuration,
  parseQuantity,
  parseResource,
  validateResource,
  type AnyResource,
  type ResourceKind,
  type ResourceValidationError,
} from '../src/resources.ts';

const API = 'backups.strata.dev/v1alpha1';
const AGE_1 = 'age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p';
const AGE_2 = `age1${'qpzry9x8gf2tvdw0s3jn54khce6mua7l'.repeat(2).slice(0, 58)}`;

type Doc = Record<string, unknown>;

/** The smallest valid document of each kind. */
const MINIMAL: Record<ResourceKind, Doc> = {
  BackupStore: {
    apiVersion: API,
    kind: 'BackupStore',
    metadata: { name: 'main' },
    spec: {
      s3: { endpoint: 'https://s3.eu-central-1.amazonaws.com', region: 'eu-central-1', bucket: 'acme-backups', credentialsSecret: { name: 's3-creds' } },
      encryption: { ageRecipients: [AGE_1], identitySecret: { name: 'age-identity' } },
    },
  },
  BackupPolicy: {
    apiVersion: API,
    kind: 'BackupPolicy',
    metadata: { name: 'nightly' },
    spec: { store: 'main', full: { schedule: '0 2 * * *' } },
  },
  BackupTarget: {
    apiVersion: API,
    kind: 'BackupTarget',
    metadata: { name: 'orders-db', namespace: 'shop' },
    spec: { engine: 'postgres', endpoint: { host: 'orders-db.shop.svc' }, credentials: { secretRef: { name: 'orders-db-backup' } }, policy: 'nightly' },
  },
  Backup: {
    apiVersion: API,
    kind: 'Backup',
    metadata: { name: 'orders-db-20260131-020000', namespace: 'shop' },
    spec: { target: 'orders-db' },
  },
  Restore: {
    apiVersion: API,
    kind: 'Restore',
    metadata: { name: 'orders-db-restore-1', namespace: 'shop' },
    spec: { target: 'orders-db', source: { latest: true }, destination: { mode: 'sandbox' } },
  },
  Sandbox: {
    apiVersion: API,
    kind: 'Sandbox',
    metadata: { name: 'orders-debug', namespace: 'shop' },
    spec: { engine: 'postgres' },
  },
};

/** A document of each kind with every spec field set (and a status). */
const FULL: Record<ResourceKind, Doc> = {
  BackupStore: {
    apiVersion: API,
    kind: 'BackupStore',
    metadata: {
      name: 'main',
      namespace: 'strata-system',
      labels: { 'app.kubernetes.io/part-of': 'strata' },
      annotations: { note: 'primary store' },
      uid: '0b9a3c1e-8f4e-4e55-9c39-5d1f0d9f3f11',
      generation: 3,
      resourceVersion: '12345',
      creationTimestamp: '2026-01-01T00:00:00Z',
      finalizers: ['backups.strata.dev/store'],
      managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
    },
    spec: {
      s3: {
        endpoint: 'http://minio.strata-system.svc:9000',
        region: 'us-east-1',
        bucket: 'backups',
        pathStyle: true,
        credentialsSecret: { namespace: 'strata-system', name: 'minio', accessKeyIdKey: 'AWS_ACCESS_KEY_ID', secretAccessKeyKey: 'AWS_SECRET_ACCESS_KEY' },
        disableConditionalPut: true,
      },
      prefix: 'prod/',
      encryption: {
        ageRecipients: [AGE_1, AGE_2],
        identitySecret: { namespace: 'strata-system', name: 'age-identity', optional: false },
        catalogRecipients: [AGE_2],
        catalogIdentitySecret: { name: 'catalog-identity', optional: true },
      },
      upload: { partSize: '64Mi', concurrency: 16 },
      readOnly: false,
    },
    status: {
      phase: 'Ready',
      message: 'reachable',
      observedGeneration: 3,
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:01:00Z', reason: 'Checked', message: 'ok', observedGeneration: 3 }],
      lastCheckTime: '2026-01-02T00:00:00Z',
      lastGCTime: '2026-01-02T03:00:00Z',
      lastImportTime: '2026-01-02T03:05:00Z',
      lastGCDeleted: 4,
      lastImportCreated: 0,
      lastGCPlanKey: 'prod/gc/plan-20260102.json',
    },
  },
  BackupPolicy: {
    apiVersion: API,
    kind: 'BackupPolicy',
    metadata: { name: 'nightly', namespace: 'strata-system' },
    spec: {
      store: 'main',
      full: { schedule: '30 1 * * mon-fri', timeZone: 'Europe/Berlin', jitter: '15m', startingDeadline: '2h' },
      pitr: { enabled: true, window: '7d', partialInterval: '30s' },
      retain: { daily: 7, weekly: 4, monthly: 12, yearly: 3 },
      limits: { perHost: 1, perTarget: 1, global: 4, priority: -5, bandwidth: '200Mi', restoreBandwidth: '1Gi' },
      loadGuard: { maxActiveConnections: 200, maxReplicationLagSeconds: 30, maxLongTransactionSeconds: 600, maxPostpones: 6, postponeFor: '10m' },
      verify: { schedule: '0 6 * * 0', timeZone: 'UTC', checks: ['inventory-matches', 'schema-matches', 'row-estimates-within-10pct', 'target-checks'], randomPointInTime: false },
      jobs: { activeDeadline: '12h', backoffLimit: 2, stallTimeout: '5m', cpu: '500m', memory: '1Gi' },
      compression: { algorithm: 'zstd', level: 'better', threads: 4 },
      sandbox: { defaultTTL: '1d', maxTTL: '2w' },
      keepBackupObjects: 30,
    },
    status: { phase: 'Ready', message: '', observedGeneration: 1, conditions: [] },
  },
  BackupTarget: {
    apiVersion: API,
    kind: 'BackupTarget',
    metadata: { name: 'orders-db', namespace: 'shop', labels: { env: 'prod' } },
    spec: {
      engine: 'postgres',
      endpoint: { host: '10.0.0.12', port: 5432 },
      databases: ['orders', 'billing'],
      credentials: { secretRef: { name: 'orders-db-backup', usernameKey: 'user', passwordKey: 'pass' } },
      policy: 'nightly',
      pitr: { enabled: true, window: '36h', partialInterval: '1m' },
      scope: {
        mode: 'logical',
        excludeData: ['audit_log', 'public.sessions'],
        excludeTables: ['tmp_import'],
        queries: [{ name: 'active-customers', database: 'orders', sql: 'select id, email from customers where active' }],
      },
      checks: [{ name: 'has-orders', database: 'orders', sql: 'select count(*) > 0 from orders' }],
      mask: ['^e-?mail$', '^password$', 'ssn|tax_id'],
      previews: { enabled: true, rows: 10, logical: true, maxValueLength: 128 },
      sandbox: { image: 'postgres:17', sizeLimit: '20Gi', storageClass: 'fast-ssd', cpu: '2', memory: '4Gi', postRestoreSQL: ['update users set email = null'] },
      exactCounts: { enabled: true, maxRows: 50000, timeout: '2.5s' },
      suspend: false,
    },
    status: {
      phase: 'Healthy',
      message: 'last backup succeeded',
      observedGeneration: 2,
      conditions: [{ type: 'Ready', status: 'True' }],
      lastBackup: { name: 'orders-db-20260131-020000', id: '20260131T020000Z-ab12', time: '2026-01-31T02:00:05Z', phase: 'Succeeded' },
      lastVerification: { name: 'orders-db-verify-1', id: '20260130T020000Z-cd34', time: '2026-01-30T02:00:05Z', phase: 'Succeeded' },
      lastSuccessTime: '2026-01-31T02:10:00Z',
      lastScheduleTime: '2026-01-31T02:00:00Z',
      nextRunTime: '2026-02-01T02:00:00Z',
      lastVerifyScheduleTime: '2026-01-25T06:00:00Z',
      pitr: {
        enabled: true,
        chainBroken: false,
        streamerReady: true,
        brokenSince: '2026-01-20T00:00:00Z',
        windowStart: '2026-01-24T00:00:00Z',
        windowEnd: '2026-01-31T02:09:00Z',
        replicationCheckedAt: '2026-01-31T02:00:00Z',
        brokenReason: '',
        lastSegment: 'segments/000000010000000000000042',
        replicationDenied: '',
        replicationFix: '',
        lagSeconds: 3,
      },
      serverVersion: '17.2',
      handledBackupNow: '2026-01-31T01:00:00Z',
      handledVerifyNow: '',
      prefix: 'prod/shop/orders-db',
      storeBytes: 123456789,
    },
  },
  Backup: {
    apiVersion: API,
    kind: 'Backup',
    metadata: { name: 'orders-db-20260131-020000', namespace: 'shop' },
    spec: {
      target: 'orders-db',
      reason: 'before migration 42',
      requestedBy: 'alice@example.com',
      backupID: '20260131T020000Z-ab12',
      pinned: true,
      pinReason: 'audit',
      pinExpires: '2026-12-31T00:00:00Z',
      skipLoadGuard: true,
    },
    status: {
      phase: 'Succeeded',
      message: 'done',
      observedGeneration: 1,
      conditions: [{ type: 'Complete', status: 'True' }],
      backupID: '20260131T020000Z-ab12',
      manifestKey: 'prod/shop/orders-db/20260131T020000Z-ab12/manifest.json.age',
      startLSN: '0/3000028',
      endLSN: '0/3000100',
      binlogFile: '',
      gtidSet: '',
      jobName: 'orders-db-full-abc12',
      serverKey: 'pg-7312',
      queuedTime: '2026-01-31T02:00:00Z',
      startTime: '2026-01-31T02:00:01Z',
      completionTime: '2026-01-31T02:09:59Z',
      verifiedTime: '2026-01-31T06:00:00Z',
      postponedUntil: '2026-01-31T01:50:00Z',
      bytes: 1073741824,
      compressedBytes: 268435456,
      durationSeconds: 598,
      binlogPos: 0,
      postpones: 1,
      attempts: 1,
      priority: 0,
      inventorySummary: { databases: 2, tables: 120, rowsEstimate: 1500000, schemaHash: 'sha256:abc', migrationVersion: '42' },
      tiers: ['daily', 'weekly'],
      warnings: [],
      verified: true,
      pinSynced: true,
      progress: { stage: 'upload', bytes: 268435456, totalBytes: 268435456, updatedAt: '2026-01-31T02:09:58Z' },
    },
  },
  Restore: {
    apiVersion: API,
    kind: 'Restore',
    metadata: { name: 'orders-db-restore-2', namespace: 'shop' },
    spec: {
      target: 'orders-db',
      source: { backupID: '20260131T020000Z-ab12', time: '2026-01-31T03:00:00Z', targetNamespace: 'shop' },
      destination: {
        mode: 'new',
        new: {
          endpoint: { host: 'scratch-db.shop.svc', port: 5433 },
          database: 'orders_restored',
          credentialsSecretRef: { name: 'scratch-admin', usernameKey: 'user', passwordKey: 'pass' },
        },
        tables: ['public.orders', 'public.order_items'],
      },
      runChecks: false,
      checks: ['schema-matches', 'has-orders'],
      reason: 'recover deleted orders',
      requestedBy: 'bob@example.com',
    },
    status: {
      phase: 'Succeeded',
      message: 'restored',
      observedGeneration: 1,
      conditions: [],
      plan: { baseBackupID: '20260131T020000Z-ab12', segments: 12, targetTime: '2026-01-31T03:00:00Z', bytes: 300000000, message: 'base backup plus 12 segments' },
      sandboxName: '',
      safetyBackup: '',
      jobName: 'orders-db-restore-2-job',
      downloadURL: '',
      attempts: 1,
      durationSeconds: 420,
      startTime: '2026-02-01T10:00:00Z',
      completionTime: '2026-02-01T10:07:00Z',
      downloadExpires: '2026-02-02T10:07:00Z',
      checks: [{ name: 'has-orders', passed: true, message: 'true' }],
      progress: { stage: 'replay', bytes: 10, totalBytes: 10, updatedAt: '2026-02-01T10:06:00Z' },
    },
  },
  Sandbox: {
    apiVersion: API,
    kind: 'Sandbox',
    metadata: { name: 'orders-debug', namespace: 'shop' },
    spec: {
      engine: 'postgres',
      image: 'postgres:17',
      owner: 'alice@example.com',
      sizeLimit: '10Gi',
      storageClass: 'fast-ssd',
      cpu: '1',
      memory: '2Gi',
      ttl: '4h',
      source: { targetNamespace: 'shop', target: 'orders-db', backupID: '20260131T020000Z-ab12', time: '2026-01-31T03:00:00Z', restoreRef: { namespace: 'shop', name: 'orders-db-restore-3' } },
      expose: true,
      physical: true,
      major: 17,
      extensions: ['2h', '1d'],
      resetGeneration: 1,
    },
    status: {
      phase: 'Ready',
      message: 'accepting connections',
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: 'True' }],
      namespace: 'strata-sandboxes',
      host: 'orders-debug.strata-sandboxes.svc',
      database: 'orders',
      credentialsSecret: 'orders-debug-credentials',
      route: 'orders-debug.sandboxes.example.com',
      restoreName: 'orders-db-restore-3',
      port: 5432,
      observedResetGeneration: 1,
      receiverPort: 7000,
      expireTime: '2026-02-01T14:00:00Z',
      readyTime: '2026-02-01T10:05:00Z',
      expiringSince: '2026-02-01T13:00:00Z',
    },
  },
};

function valid(doc: unknown): AnyResource {
  const result = validateResource(doc);
  if (!result.ok) throw new Error(`expected a valid resource, got:\n${result.errors.map((e) => e.message).join('\n')}`);
  return result.resource;
}

function errorsOf(doc: unknown): ResourceValidationError[] {
  const result = validateResource(doc);
  if (result.ok) throw new Error('expected validation errors, the document is valid');
  return result.errors;
}

/** A copy of MINIMAL[kind] changed by `change`. */
function variant(kind: ResourceKind, change: (doc: Doc & { spec: Doc; metadata: Doc }) => void, base: Record<ResourceKind, Doc> = MINIMAL): Doc {
  const doc = structuredClone(base[kind]) as Doc & { spec: Doc; metadata: Doc };
  change(doc);
  return doc;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

describe('valid documents', () => {
  it.each(RESOURCE_KINDS)('minimal %s passes', (kind) => {
    const resource = valid(MINIMAL[kind]);
    expect(resource.kind).toBe(kind);
    expect(resource.apiVersion).toBe(RESOURCE_API_VERSION);
  });

  it.each(RESOURCE_KINDS)('full %s passes and keeps every value given', (kind) => {
    const resource = valid(FULL[kind]);
    expect(resource).toMatchObject(FULL[kind]);
  });

  it.each(RESOURCE_KINDS)('%s: the input is never modified (it may even be frozen)', (kind) => {
    const input = deepFreeze(structuredClone(MINIMAL[kind]));
    const before = JSON.stringify(input);
    const resource = valid(input);
    expect(JSON.stringify(input)).toBe(before);
    expect(resource).not.toBe(input);
  });

  it('fills metadata.namespace with default when missing and keeps a given one', () => {
    expect(valid(MINIMAL.BackupStore).metadata.namespace).toBe('default');
    expect(valid(MINIMAL.BackupTarget).metadata.namespace).toBe('shop');
  });

  it('BackupStore defaults: secret key names, upload part size and concurrency', () => {
    const r = valid(MINIMAL.BackupStore);
    if (r.kind !== 'BackupStore') throw new Error('kind');
    expect(r.spec.s3.credentialsSecret).toEqual({ name: 's3-creds', accessKeyIdKey: 'accessKeyId', secretAccessKeyKey: 'secretAccessKey' });
    expect(r.spec.upload).toEqual({ partSize: '16Mi', concurrency: 8 });
    expect(r.spec.encryption.identitySecret).toEqual({ name: 'age-identity' });
  });

  it('BackupPolicy defaults: time zone, starting deadline, pitr, verify, jobs, compression, keepBackupObjects', () => {
    const r = valid(MINIMAL.BackupPolicy);
    if (r.kind !== 'BackupPolicy') throw new Error('kind');
    expect(r.spec.full).toEqual({ schedule: '0 2 * * *', timeZone: 'UTC', startingDeadline: '6h' });
    expect(r.spec.pitr).toEqual({ partialInterval: '60s' });
    expect(r.spec.verify).toEqual({ randomPointInTime: true });
    expect(r.spec.jobs).toEqual({ stallTimeout: '60s' });
    expect(r.spec.compression).toEqual({ algorithm: 'zstd', level: 'default' });
    expect(r.spec.keepBackupObjects).toBe(20);
    expect(r.spec.retain).toBeUndefined();
  });

  it('BackupPolicy defaults fill only what is missing inside a given object', () => {
    const r = valid(variant('BackupPolicy', (d) => void (d.spec.compression = { threads: 0 })));
    if (r.kind !== 'BackupPolicy') throw new Error('kind');
    expect(r.spec.compression).toEqual({ algorithm: 'zstd', level: 'default', threads: 0 });
  });

  it('BackupTarget defaults: databases, secret key names, previews, exactCounts; pitr overrides get no defaults', () => {
    const r = valid(variant('BackupTarget', (d) => void (d.spec.pitr = { enabled: true })));
    if (r.kind !== 'BackupTarget') throw new Error('kind');
    expect(r.spec.databases).toEqual(['*']);
    expect(r.spec.credentials.secretRef).toEqual({ name: 'orders-db-backup', usernameKey: 'username', passwordKey: 'password' });
    expect(r.spec.previews).toEqual({ rows: 5, logical: false, maxValueLength: 64 });
    expect(r.spec.exactCounts).toEqual({ maxRows: 100000, timeout: '5s' });
    expect(r.spec.pitr).toEqual({ enabled: true });
  });

  it('Restore defaults: runChecks, and the secret key names of a new destination', () => {
    const r = valid(MINIMAL.Restore);
    if (r.kind !== 'Restore') throw new Error('kind');
    expect(r.spec.runChecks).toBe(true);
    const n = valid(
      variant('Restore', (d) => {
        d.spec.destination = { mode: 'new', new: { endpoint: { host: 'db' }, database: 'x', credentialsSecretRef: { name: 'admin' } } };
      }),
    );
    if (n.kind !== 'Restore') throw new Error('kind');
    expect(n.spec.destination.new?.credentialsSecretRef).toEqual({ name: 'admin', usernameKey: 'username', passwordKey: 'password' });
  });

  it('each default is a fresh value (no sharing between documents)', () => {
    const a = valid(MINIMAL.BackupTarget);
    const b = valid(MINIMAL.BackupTarget);
    if (a.kind !== 'BackupTarget' || b.kind !== 'BackupTarget') throw new Error('kind');
    a.spec.databases.push('extra');
    expect(b.spec.databases).toEqual(['*']);
  });

  it.each([
    ['durations with d and w', (d: Doc & { spec: Doc }) => void (d.spec.pitr = { window: '2w', partialInterval: '90s' })],
    ['fractional and repeated units', (d: Doc & { spec: Doc }) => void (d.spec.full = { schedule: '0 2 * * *', startingDeadline: '1.5h', jitter: '1h30m' })],
    ['36h and 7d', (d: Doc & { spec: Doc }) => void (d.spec.sandbox = { defaultTTL: '36h', maxTTL: '7d' })],
    ['cron names, ranges, steps and lists', (d: Doc & { spec: Doc }) => void (d.spec.full = { schedule: '*/15 1-5,22 * jan-mar mon-fri' })],
    ['an IANA link name', (d: Doc & { spec: Doc }) => void (d.spec.full = { schedule: '0 2 * * *', timeZone: 'Europe/Kiev' })],
    ['threads 0 and 64', (d: Doc & { spec: Doc }) => void (d.spec.compression = { threads: 64 })],
    ['threads 0', (d: Doc & { spec: Doc }) => void (d.spec.compression = { threads: 0 })],
  ])('BackupPolicy accepts %s', (_name, change) => {
    valid(variant('BackupPolicy', change));
  });

  it('accepts upload.partSize at both S3 limits', () => {
    valid(variant('BackupStore', (d) => void ((d.spec as { upload?: unknown }).upload = { partSize: '5Mi' })));
    valid(variant('BackupStore', (d) => void ((d.spec as { upload?: unknown }).upload = { partSize: '5Gi' })));
    valid(variant('BackupStore', (d) => void ((d.spec as { upload?: unknown }).upload = { partSize: '5242880' })));
  });

  it('accepts a live object read from the API server (managedFields, ownerReferences, deletionTimestamp, status)', () => {
    valid(
      variant('Backup', (d) => {
        d.metadata = {
          ...d.metadata,
          uid: 'u',
          generation: 2,
          resourceVersion: '9',
          creationTimestamp: '2026-01-31T02:00:00Z',
          deletionTimestamp: '2026-02-01T00:00:00Z',
          deletionGracePeriodSeconds: 0,
          ownerReferences: [{ apiVersion: API, kind: 'BackupTarget', name: 'orders-db', uid: 'x', controller: true }],
          managedFields: [{ manager: 'strata-controller', operation: 'Update' }],
          finalizers: ['backups.strata.dev/backup'],
        };
        d.status = { phase: 'Running', progress: { stage: 'dump', bytes: 1 } };
      }),
    );
  });

  it('parseResource returns the resource or throws with every message', () => {
    expect(parseResource(MINIMAL.Sandbox).kind).toBe('Sandbox');
    expect(() => parseResource(variant('Sandbox', (d) => void (d.spec.engine = 'oracle')))).toThrow(/spec\.engine: "oracle" is not one of/);
  });
});

interface BadCase {
  name: string;
  kind: ResourceKind;
  change: (doc: Doc & { spec: Doc; metadata: Doc }) => void;
  path: string;
  message: string | RegExp;
  base?: Record<ResourceKind, Doc>;
}

const set = (obj: Doc, dotted: string, value: unknown): void => {
  const keys = dotted.split('.');
  let node = obj;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Doc;
  }
  node[keys[keys.length - 1] as string] = value;
};
const del = (obj: Doc, dotted: string): void => {
  const keys = dotted.split('.');
  let node = obj;
  for (const key of keys.slice(0, -1)) node = node[key] as Doc;
  delete node[keys[keys.length - 1] as string];
};

const BAD: BadCase[] = [
  // cron
  { name: 'cron with 4 fields', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.schedule', '0 2 * *'), path: 'spec.full.schedule', message: 'spec.full.schedule: "0 2 * *" is not a 5-field cron expression' },
  { name: 'cron with 3 fields', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.schedule', '* * *'), path: 'spec.full.schedule', message: 'spec.full.schedule: "* * *" is not a 5-field cron expression' },
  { name: 'cron with 6 fields (seconds)', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.schedule', '0 0 2 * * *'), path: 'spec.full.schedule', message: 'spec.full.schedule: "0 0 2 * * *" is not a 5-field cron expression' },
  { name: 'cron garbage', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.schedule', 'every day at two'), path: 'spec.full.schedule', message: /^spec\.full\.schedule: "every day at two" is not a 5-field cron expression$/ },
  { name: 'cron garbage in 5 fields', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.schedule', 'a b c d e'), path: 'spec.full.schedule', message: /^spec\.full\.schedule: "a b c d e" is not a valid cron expression: / },
  { name: 'cron minute 60', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.schedule', '60 2 * * *'), path: 'spec.full.schedule', message: /^spec\.full\.schedule: "60 2 \* \* \*" is not a valid cron expression: .*0-59/ },
  { name: 'cron macro', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.schedule', '@daily'), path: 'spec.full.schedule', message: 'spec.full.schedule: "@daily" is not a 5-field cron expression' },
  { name: 'cron H hash', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.schedule', 'H 2 * * *'), path: 'spec.full.schedule', message: /H \(hashed\) values are not supported/ },
  { name: 'empty cron', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.schedule', ''), path: 'spec.full.schedule', message: 'spec.full.schedule: "" is not a 5-field cron expression' },
  { name: 'verify cron', kind: 'BackupPolicy', change: (d) => set(d, 'spec.verify.schedule', '0 6 * * 8'), path: 'spec.verify.schedule', message: /^spec\.verify\.schedule: "0 6 \* \* 8" is not a valid cron expression/ },
  // time zones
  { name: 'unknown time zone', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.timeZone', 'Mars/Olympus_Mons'), path: 'spec.full.timeZone', message: 'spec.full.timeZone: "Mars/Olympus_Mons" is not an IANA time zone (e.g. UTC, Europe/Berlin, America/New_York)' },
  { name: 'offset as time zone', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.timeZone', '+01:00'), path: 'spec.full.timeZone', message: /is not an IANA time zone/ },
  { name: 'lower-case time zone', kind: 'BackupPolicy', change: (d) => set(d, 'spec.verify.timeZone', 'europe/berlin'), path: 'spec.verify.timeZone', message: /"europe\/berlin" is not an IANA time zone/ },
  // durations
  { name: 'duration 5x', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.startingDeadline', '5x'), path: 'spec.full.startingDeadline', message: 'spec.full.startingDeadline: "5x" is not a duration (a number with a unit ns, us, ms, s, m, h, d or w, e.g. 90s, 1h30m, 7d)' },
  { name: 'duration without unit', kind: 'BackupPolicy', change: (d) => set(d, 'spec.pitr.window', '60'), path: 'spec.pitr.window', message: /"60" is not a duration/ },
  { name: 'negative duration', kind: 'BackupPolicy', change: (d) => set(d, 'spec.jobs.stallTimeout', '-5s'), path: 'spec.jobs.stallTimeout', message: /"-5s" is not a duration/ },
  { name: 'duration with spaces', kind: 'Sandbox', change: (d) => set(d, 'spec.extensions', ['2h', '1 h']), path: 'spec.extensions[1]', message: /^spec\.extensions\[1\]: "1 h" is not a duration/ },
  { name: 'duration as number', kind: 'BackupTarget', change: (d) => set(d, 'spec.exactCounts.timeout', 5), path: 'spec.exactCounts.timeout', message: 'spec.exactCounts.timeout: must be a string (got 5)' },
  // compression
  { name: 'threads 65', kind: 'BackupPolicy', change: (d) => set(d, 'spec.compression.threads', 65), path: 'spec.compression.threads', message: 'spec.compression.threads: must be at most 64' },
  { name: 'threads -1', kind: 'BackupPolicy', change: (d) => set(d, 'spec.compression.threads', -1), path: 'spec.compression.threads', message: 'spec.compression.threads: must be at least 0' },
  { name: 'threads 1.5', kind: 'BackupPolicy', change: (d) => set(d, 'spec.compression.threads', 1.5), path: 'spec.compression.threads', message: 'spec.compression.threads: must be an integer (got 1.5)' },
  { name: 'compression algorithm', kind: 'BackupPolicy', change: (d) => set(d, 'spec.compression.algorithm', 'lz4'), path: 'spec.compression.algorithm', message: 'spec.compression.algorithm: "lz4" is not one of "zstd", "none"' },
  { name: 'compression level', kind: 'BackupPolicy', change: (d) => set(d, 'spec.compression.level', 'max'), path: 'spec.compression.level', message: 'spec.compression.level: "max" is not one of "fastest", "default", "better", "best"' },
  // other policy bounds
  { name: 'keepBackupObjects -1', kind: 'BackupPolicy', change: (d) => set(d, 'spec.keepBackupObjects', -1), path: 'spec.keepBackupObjects', message: 'spec.keepBackupObjects: must be at least 0' },
  { name: 'retain daily negative', kind: 'BackupPolicy', change: (d) => set(d, 'spec.retain.daily', -7), path: 'spec.retain.daily', message: 'spec.retain.daily: must be at least 0' },
  { name: 'bandwidth not a quantity', kind: 'BackupPolicy', change: (d) => set(d, 'spec.limits.bandwidth', '200MB/s'), path: 'spec.limits.bandwidth', message: /"200MB\/s" is not a byte quantity/ },
  { name: 'job memory not a quantity', kind: 'BackupPolicy', change: (d) => set(d, 'spec.jobs.memory', 'lots'), path: 'spec.jobs.memory', message: /"lots" is not a Kubernetes resource quantity/ },
  { name: 'unknown verify check', kind: 'BackupPolicy', change: (d) => set(d, 'spec.verify.checks', ['row-estimates-within-pct']), path: 'spec.verify.checks[0]', message: /is not a built-in check/ },
  { name: 'policy missing store', kind: 'BackupPolicy', change: (d) => del(d, 'spec.store'), path: 'spec.store', message: 'spec.store: is required' },
  { name: 'policy missing full', kind: 'BackupPolicy', change: (d) => del(d, 'spec.full'), path: 'spec.full', message: 'spec.full: is required' },
  { name: 'policy missing schedule', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full', {}), path: 'spec.full.schedule', message: 'spec.full.schedule: is required' },
  { name: 'sandbox defaultTTL above maxTTL', kind: 'BackupPolicy', change: (d) => set(d, 'spec.sandbox', { defaultTTL: '2w', maxTTL: '7d' }), path: 'spec.sandbox.defaultTTL', message: 'spec.sandbox.defaultTTL: must not be longer than maxTTL (7d)' },
  { name: 'unknown field in a nested spec object', kind: 'BackupPolicy', change: (d) => set(d, 'spec.full.cron', '0 2 * * *'), path: 'spec.full.cron', message: 'spec.full.cron: is not a known field' },
  // store
  { name: 'empty ageRecipients', kind: 'BackupStore', change: (d) => set(d, 'spec.encryption.ageRecipients', []), path: 'spec.encryption.ageRecipients', message: 'spec.encryption.ageRecipients: must list at least one item' },
  { name: 'bad age recipient', kind: 'BackupStore', change: (d) => set(d, 'spec.encryption.ageRecipients', [AGE_1, 'age1NOTVALID']), path: 'spec.encryption.ageRecipients[1]', message: 'spec.encryption.ageRecipients[1]: "age1NOTVALID" is not an age recipient (age1 followed by 58 lowercase bech32 characters)' },
  { name: 'upper-case age recipient', kind: 'BackupStore', change: (d) => set(d, 'spec.encryption.ageRecipients', [AGE_1.toUpperCase()]), path: 'spec.encryption.ageRecipients[0]', message: /is not an age recipient/ },
  { name: 'age recipient with b (not bech32)', kind: 'BackupStore', change: (d) => set(d, 'spec.encryption.ageRecipients', [`age1${'b'.repeat(58)}`]), path: 'spec.encryption.ageRecipients[0]', message: /is not an age recipient/ },
  { name: 'duplicate age recipient', kind: 'BackupStore', change: (d) => set(d, 'spec.encryption.ageRecipients', [AGE_1, AGE_1]), path: 'spec.encryption.ageRecipients[1]', message: `spec.encryption.ageRecipients[1]: "${AGE_1}" is listed twice (items 0 and 1)` },
  { name: 'bad catalog recipient', kind: 'BackupStore', change: (d) => set(d, 'spec.encryption.catalogRecipients', ['ssh-ed25519 AAAA']), path: 'spec.encryption.catalogRecipients[0]', message: /is not an age recipient/ },
  { name: 'missing s3', kind: 'BackupStore', change: (d) => del(d, 'spec.s3'), path: 'spec.s3', message: 'spec.s3: is required' },
  { name: 'missing encryption', kind: 'BackupStore', change: (d) => del(d, 'spec.encryption'), path: 'spec.encryption', message: 'spec.encryption: is required' },
  { name: 'missing identitySecret', kind: 'BackupStore', change: (d) => del(d, 'spec.encryption.identitySecret'), path: 'spec.encryption.identitySecret', message: 'spec.encryption.identitySecret: is required' },
  { name: 'empty bucket', kind: 'BackupStore', change: (d) => set(d, 'spec.s3.bucket', ''), path: 'spec.s3.bucket', message: 'spec.s3.bucket: must not be empty' },
  { name: 'endpoint without scheme', kind: 'BackupStore', change: (d) => set(d, 'spec.s3.endpoint', 's3.amazonaws.com'), path: 'spec.s3.endpoint', message: 'spec.s3.endpoint: "s3.amazonaws.com" is not an http:// or https:// URL' },
  { name: 'credentialsSecret without name', kind: 'BackupStore', change: (d) => set(d, 'spec.s3.credentialsSecret', {}), path: 'spec.s3.credentialsSecret.name', message: 'spec.s3.credentialsSecret.name: is required' },
  { name: 'part size below 5Mi', kind: 'BackupStore', change: (d) => set(d, 'spec.upload.partSize', '4Mi'), path: 'spec.upload.partSize', message: 'spec.upload.partSize: must be at least 5Mi (got "4Mi")' },
  { name: 'part size above 5Gi', kind: 'BackupStore', change: (d) => set(d, 'spec.upload.partSize', '6G'), path: 'spec.upload.partSize', message: 'spec.upload.partSize: must be at most 5Gi (got "6G")' },
  { name: 'part size not a quantity', kind: 'BackupStore', change: (d) => set(d, 'spec.upload.partSize', '16MB'), path: 'spec.upload.partSize', message: /"16MB" is not a byte quantity/ },
  { name: 'concurrency 0', kind: 'BackupStore', change: (d) => set(d, 'spec.upload.concurrency', 0), path: 'spec.upload.concurrency', message: 'spec.upload.concurrency: must be at least 1' },
  { name: 'unknown spec field', kind: 'BackupStore', change: (d) => set(d, 'spec.foo', 1), path: 'spec.foo', message: 'spec.foo: is not a known field' },
  { name: 'unknown top-level field', kind: 'BackupStore', change: (d) => set(d, 'extra', true), path: 'extra', message: 'extra: is not a known field' },
  { name: 'readOnly as string', kind: 'BackupStore', change: (d) => set(d, 'spec.readOnly', 'yes'), path: 'spec.readOnly', message: 'spec.readOnly: must be a boolean (true or false) (got "yes")' },
  // metadata
  { name: 'missing metadata.name', kind: 'BackupStore', change: (d) => del(d, 'metadata.name'), path: 'metadata.name', message: 'metadata.name: is required' },
  { name: 'upper-case name', kind: 'BackupStore', change: (d) => set(d, 'metadata.name', 'Main'), path: 'metadata.name', message: /^metadata\.name: "Main" is not a valid name \(a DNS-1123 subdomain/ },
  { name: 'target name longer than a label', kind: 'BackupTarget', change: (d) => set(d, 'metadata.name', 'a'.repeat(64)), path: 'metadata.name', message: 'metadata.name: must be at most 63 characters long (got 64)' },
  { name: 'dotted sandbox name', kind: 'Sandbox', change: (d) => set(d, 'metadata.name', 'a.b'), path: 'metadata.name', message: /"a\.b" is not a valid name \(a DNS-1123 label/ },
  { name: 'bad namespace', kind: 'Backup', change: (d) => set(d, 'metadata.namespace', 'Shop_1'), path: 'metadata.namespace', message: /"Shop_1" is not a valid name/ },
  { name: 'label value not a string', kind: 'Backup', change: (d) => set(d, 'metadata.labels', { 'app.kubernetes.io/name': 5 }), path: 'metadata.labels["app.kubernetes.io/name"]', message: 'metadata.labels["app.kubernetes.io/name"]: must be a string (got 5)' },
  { name: 'typo in metadata', kind: 'Backup', change: (d) => set(d, 'metadata.lables', {}), path: 'metadata.lables', message: 'metadata.lables: is not a known field' },
  { name: 'missing spec', kind: 'Backup', change: (d) => del(d, 'spec'), path: 'spec', message: 'spec: is required' },
  { name: 'missing metadata', kind: 'Backup', change: (d) => del(d, 'metadata'), path: 'metadata', message: 'metadata: is required' },
  // target
  { name: 'unknown engine', kind: 'BackupTarget', change: (d) => set(d, 'spec.engine', 'oracle'), path: 'spec.engine', message: 'spec.engine: "oracle" is not one of "postgres", "mysql", "mongodb"' },
  { name: 'missing endpoint', kind: 'BackupTarget', change: (d) => del(d, 'spec.endpoint'), path: 'spec.endpoint', message: 'spec.endpoint: is required' },
  { name: 'missing endpoint host', kind: 'BackupTarget', change: (d) => set(d, 'spec.endpoint', { port: 5432 }), path: 'spec.endpoint.host', message: 'spec.endpoint.host: is required' },
  { name: 'port 0', kind: 'BackupTarget', change: (d) => set(d, 'spec.endpoint.port', 0), path: 'spec.endpoint.port', message: 'spec.endpoint.port: must be at least 1' },
  { name: 'port 70000', kind: 'BackupTarget', change: (d) => set(d, 'spec.endpoint.port', 70000), path: 'spec.endpoint.port', message: 'spec.endpoint.port: must be at most 65535' },
  { name: 'missing credentials', kind: 'BackupTarget', change: (d) => del(d, 'spec.credentials'), path: 'spec.credentials', message: 'spec.credentials: is required' },
  { name: 'missing secretRef', kind: 'BackupTarget', change: (d) => set(d, 'spec.credentials', {}), path: 'spec.credentials.secretRef', message: 'spec.credentials.secretRef: is required' },
  { name: 'missing policy', kind: 'BackupTarget', change: (d) => del(d, 'spec.policy'), path: 'spec.policy', message: 'spec.policy: is required' },
  { name: 'empty databases', kind: 'BackupTarget', change: (d) => set(d, 'spec.databases', []), path: 'spec.databases', message: 'spec.databases: must list at least one item' },
  { name: 'scope mode', kind: 'BackupTarget', change: (d) => set(d, 'spec.scope.mode', 'incremental'), path: 'spec.scope.mode', message: 'spec.scope.mode: "incremental" is not one of "physical", "logical", ""' },
  { name: 'mysql physical', kind: 'BackupTarget', change: (d) => { set(d, 'spec.engine', 'mysql'); set(d, 'spec.scope.mode', 'physical'); }, path: 'spec.scope.mode', message: 'spec.scope.mode: mysql backups are always logical; "physical" is not allowed' },
  { name: 'excludeData with physical', kind: 'BackupTarget', change: (d) => set(d, 'spec.scope', { mode: 'physical', excludeData: ['audit'] }), path: 'spec.scope.excludeData', message: 'spec.scope.excludeData: applies to logical backups only, but scope.mode is "physical"' },
  { name: 'previews.logical on mysql', kind: 'BackupTarget', change: (d) => { set(d, 'spec.engine', 'mysql'); set(d, 'spec.previews.logical', true); }, path: 'spec.previews.logical', message: 'spec.previews.logical: is for postgres targets only (engine is "mysql")' },
  { name: 'previews rows 0', kind: 'BackupTarget', change: (d) => set(d, 'spec.previews.rows', 0), path: 'spec.previews.rows', message: 'spec.previews.rows: must be at least 1' },
  { name: 'exactCounts maxRows negative', kind: 'BackupTarget', change: (d) => set(d, 'spec.exactCounts.maxRows', -1), path: 'spec.exactCounts.maxRows', message: 'spec.exactCounts.maxRows: must be at least 0' },
  { name: 'check without sql', kind: 'BackupTarget', change: (d) => set(d, 'spec.checks', [{ name: 'x' }]), path: 'spec.checks[0].sql', message: 'spec.checks[0].sql: is required' },
  { name: 'duplicate check names', kind: 'BackupTarget', change: (d) => set(d, 'spec.checks', [{ name: 'x', sql: 'select true' }, { name: 'x', sql: 'select 1=1' }]), path: 'spec.checks[1].name', message: 'spec.checks[1].name: "x" is already used by another check' },
  { name: 'query without name', kind: 'BackupTarget', change: (d) => set(d, 'spec.scope.queries', [{ sql: 'select 1' }]), path: 'spec.scope.queries[0].name', message: 'spec.scope.queries[0].name: is required' },
  { name: 'mask not a regex', kind: 'BackupTarget', change: (d) => set(d, 'spec.mask', ['email', '(unclosed']), path: 'spec.mask[1]', message: /^spec\.mask\[1\]: "\(unclosed" is not a valid regular expression: / },
  { name: 'pitr override unknown field', kind: 'BackupTarget', change: (d) => set(d, 'spec.pitr.retention', '7d'), path: 'spec.pitr.retention', message: 'spec.pitr.retention: is not a known field' },
  { name: 'sandbox sizeLimit', kind: 'BackupTarget', change: (d) => set(d, 'spec.sandbox.sizeLimit', 'big'), path: 'spec.sandbox.sizeLimit', message: /"big" is not a byte quantity/ },
  // backup
  { name: 'backup without target', kind: 'Backup', change: (d) => set(d, 'spec', {}), path: 'spec.target', message: 'spec.target: is required' },
  { name: 'pinExpires not a date-time', kind: 'Backup', change: (d) => set(d, 'spec.pinExpires', 'tomorrow'), path: 'spec.pinExpires', message: 'spec.pinExpires: "tomorrow" is not an RFC 3339 date-time (e.g. 2026-01-31T02:00:00Z)' },
  { name: 'reason over 1000 characters', kind: 'Backup', change: (d) => set(d, 'spec.reason', 'x'.repeat(1001)), path: 'spec.reason', message: 'spec.reason: must be at most 1000 characters long (got 1001)' },
  { name: 'status field unknown', kind: 'Backup', change: (d) => set(d, 'status', { phase: 'Done', sizeBytes: 1 }), path: 'status.sizeBytes', message: 'status.sizeBytes: is not a known field' },
  { name: 'condition status', kind: 'Backup', change: (d) => set(d, 'status', { conditions: [{ type: 'Ready', status: 'yes' }] }), path: 'status.conditions[0].status', message: 'status.conditions[0].status: "yes" is not one of "True", "False", "Unknown"' },
  // restore
  { name: 'restore mode', kind: 'Restore', change: (d) => set(d, 'spec.destination.mode', 'clone'), path: 'spec.destination.mode', message: 'spec.destination.mode: "clone" is not one of "sandbox", "new", "in-place", "download"' },
  { name: 'restore without destination mode', kind: 'Restore', change: (d) => set(d, 'spec.destination', {}), path: 'spec.destination.mode', message: 'spec.destination.mode: is required' },
  { name: 'restore without source', kind: 'Restore', change: (d) => del(d, 'spec.source'), path: 'spec.source', message: 'spec.source: is required' },
  { name: 'restore with an empty source', kind: 'Restore', change: (d) => set(d, 'spec.source', {}), path: 'spec.source', message: 'spec.source: must set backupID, time or latest: true' },
  { name: 'restore latest and time', kind: 'Restore', change: (d) => set(d, 'spec.source', { latest: true, time: '2026-01-31T03:00:00Z' }), path: 'spec.source.time', message: 'spec.source.time: cannot be combined with latest: true' },
  { name: 'mode new without new', kind: 'Restore', change: (d) => set(d, 'spec.destination', { mode: 'new' }), path: 'spec.destination.new', message: 'spec.destination.new: is required when mode is "new"' },
  { name: 'mode in-place without inPlace', kind: 'Restore', change: (d) => set(d, 'spec.destination', { mode: 'in-place' }), path: 'spec.destination.inPlace', message: 'spec.destination.inPlace: is required when mode is "in-place"' },
  { name: 'inPlace with mode sandbox', kind: 'Restore', change: (d) => set(d, 'spec.destination.inPlace', { confirm: 'orders-db', credentialsSecretRef: { name: 'admin' } }), path: 'spec.destination.inPlace', message: 'spec.destination.inPlace: is only allowed when mode is "in-place" (mode is "sandbox")' },
  { name: 'in-place confirm mismatch', kind: 'Restore', change: (d) => set(d, 'spec.destination', { mode: 'in-place', inPlace: { confirm: 'orders', credentialsSecretRef: { name: 'admin' } } }), path: 'spec.destination.inPlace.confirm', message: 'spec.destination.inPlace.confirm: must equal the target name "orders-db" (got "orders")' },
  { name: 'in-place without credentials', kind: 'Restore', change: (d) => set(d, 'spec.destination', { mode: 'in-place', inPlace: { confirm: 'orders-db' } }), path: 'spec.destination.inPlace.credentialsSecretRef', message: 'spec.destination.inPlace.credentialsSecretRef: is required' },
  { name: 'new without database', kind: 'Restore', change: (d) => set(d, 'spec.destination', { mode: 'new', new: { endpoint: { host: 'db' }, credentialsSecretRef: { name: 'admin' } } }), path: 'spec.destination.new.database', message: 'spec.destination.new.database: is required' },
  { name: 'sandbox ttl', kind: 'Restore', change: (d) => set(d, 'spec.destination.sandbox', { ttl: '1 day' }), path: 'spec.destination.sandbox.ttl', message: /"1 day" is not a duration/ },
  { name: 'source time', kind: 'Restore', change: (d) => set(d, 'spec.source', { time: '2026-13-01T00:00:00Z' }), path: 'spec.source.time', message: /is not an RFC 3339 date-time/ },
  // sandbox
  { name: 'sandbox engine missing', kind: 'Sandbox', change: (d) => set(d, 'spec', {}), path: 'spec.engine', message: 'spec.engine: is required' },
  { name: 'physical mysql sandbox', kind: 'Sandbox', change: (d) => { set(d, 'spec.engine', 'mysql'); set(d, 'spec.physical', true); }, path: 'spec.physical', message: 'spec.physical: is for postgres sandboxes only (engine is "mysql")' },
  { name: 'major on mongodb', kind: 'Sandbox', change: (d) => { set(d, 'spec.engine', 'mongodb'); set(d, 'spec.major', 7); }, path: 'spec.major', message: 'spec.major: is for postgres sandboxes only (engine is "mongodb")' },
  { name: 'resetGeneration negative', kind: 'Sandbox', change: (d) => set(d, 'spec.resetGeneration', -1), path: 'spec.resetGeneration', message: 'spec.resetGeneration: must be at least 0' },
  { name: 'restoreRef without name', kind: 'Sandbox', change: (d) => set(d, 'spec.source', { restoreRef: { namespace: 'shop' } }), path: 'spec.source.restoreRef.name', message: 'spec.source.restoreRef.name: is required' },
];

describe('invalid documents', () => {
  it.each(BAD)('$kind: $name', ({ kind, change, path, message, base }) => {
    const errors = errorsOf(variant(kind, change, base));
    const atPath = errors.filter((e) => e.path === path);
    expect(atPath, `errors were: ${errors.map((e) => e.message).join(' | ')}`).not.toHaveLength(0);
    if (typeof message === 'string') expect(atPath.map((e) => e.message)).toContain(message);
    else expect(atPath.some((e) => message.test(e.message)), `errors were: ${atPath.map((e) => e.message).join(' | ')}`).toBe(true);
    for (const e of errors) expect(e.message.startsWith(e.path === '' ? '' : `${e.path}: `)).toBe(true);
  });

  it('reports every problem of a document at once', () => {
    const errors = errorsOf(
      variant('BackupPolicy', (d) => {
        set(d, 'spec.full.schedule', '* * *');
        set(d, 'spec.compression.threads', 65);
        set(d, 'spec.foo', true);
      }),
    );
    expect(errors.map((e) => e.message)).toEqual(
      expect.arrayContaining([
        'spec.full.schedule: "* * *" is not a 5-field cron expression',
        'spec.compression.threads: must be at most 64',
        'spec.foo: is not a known field',
      ]),
    );
  });

  it.each([
    ['a wrong kind', { ...MINIMAL.Backup, kind: 'Snapshot' }, 'kind', 'kind: "Snapshot" is not a Strata resource kind (expected one of BackupStore, BackupPolicy, BackupTarget, Backup, Restore, Sandbox).'],
    ['a wrongly capitalised kind', { ...MINIMAL.Backup, kind: 'backupTarget' }, 'kind', /Did you mean BackupTarget\?$/],
    ['a missing kind', { ...MINIMAL.Backup, kind: undefined }, 'kind', 'kind: is required (one of BackupStore, BackupPolicy, BackupTarget, Backup, Restore, Sandbox)'],
    ['another apiVersion', { ...MINIMAL.Backup, apiVersion: 'backups.strata.dev/v1' }, 'apiVersion', 'apiVersion: "backups.strata.dev/v1" is not supported; Strata resources use "backups.strata.dev/v1alpha1"'],
    ['a foreign apiVersion', { ...MINIMAL.Backup, apiVersion: 'velero.io/v1' }, 'apiVersion', /^apiVersion: "velero\.io\/v1" is not supported/],
    ['a missing apiVersion', { ...MINIMAL.Backup, apiVersion: undefined }, 'apiVersion', 'apiVersion: is required (expected "backups.strata.dev/v1alpha1")'],
  ])('%s gives one clear error', (_name, doc, path, message) => {
    const errors = errorsOf(JSON.parse(JSON.stringify(doc)));
    expect(errors).toHaveLength(1);
    expect(errors[0]?.path).toBe(path);
    if (typeof message === 'string') expect(errors[0]?.message).toBe(message);
    else expect(errors[0]?.message).toMatch(message);
  });

  it('a spec that belongs to another kind is caught by the kind it claims', () => {
    const errors = errorsOf({ ...MINIMAL.Sandbox, kind: 'Backup' });
    expect(errors.map((e) => e.message)).toEqual(expect.arrayContaining(['spec.target: is required', 'spec.engine: is not a known field']));
  });

  it.each([null, 'kind: Backup', 42, [MINIMAL.Backup]])('rejects a non-object document (%j)', (doc) => {
    const errors = errorsOf(doc);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.path).toBe('');
    expect(errors[0]?.message).toMatch(/^a resource must be an object with apiVersion, kind, metadata and spec/);
  });
});

describe('cron and time zones', () => {
  it.each(['0 2 * * *', '*/5 * * * *', '0 0 1 1 *', '30 4 1,15 * 5', '0 22 * * 1-5', '0 0 * * sun', '0 0 L * *', '0 0 * * 7', '  0 2 * * *  '])('accepts %j', (expr) => {
    expect(cronProblem(expr)).toBeUndefined();
  });

  it.each([
    ['* * * *', 'is not a 5-field cron expression'],
    ['0 0 2 * * *', 'is not a 5-field cron expression'],
    ['garbage', 'is not a 5-field cron expression'],
    ['@hourly', 'is not a 5-field cron expression'],
    ['0 24 * * *', 'is not a valid cron expression'],
    ['0 0 32 * *', 'is not a valid cron expression'],
    ['0 0 * 13 *', 'is not a valid cron expression'],
    ['*/0 * * * *', 'is not a valid cron expression'],
    ['H * * * *', 'is not a valid cron expression'],
  ])('rejects %j', (expr, text) => {
    expect(cronProblem(expr)).toMatch(text);
  });

  it.each(['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Asia/Kolkata', 'Etc/GMT+1', 'Europe/Kiev'])('%s is an IANA time zone', (zone) => {
    expect(isIanaTimeZone(zone)).toBe(true);
  });

  it.each(['', 'utc', 'Mars/Base', 'Europe/Berlin ', '+02:00', 'GMT+2', 'Europe/Atlantis', 'Local'])('%j is not an IANA time zone', (zone) => {
    expect(isIanaTimeZone(zone)).toBe(false);
  });
});

describe('parseDuration and formatDuration', () => {
  it.each([
    ['1ns', 1e-6],
    ['1us', 0.001],
    ['250ms', 250],
    ['90s', 90_000],
    ['15m', 900_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['36h', 129_600_000],
    ['7d', 604_800_000],
    ['2w', 1_209_600_000],
    ['1w2d3h4m5s6ms', 604_800_000 + 2 * 86_400_000 + 3 * 3_600_000 + 4 * 60_000 + 5_000 + 6],
    ['30s30s', 60_000],
    ['0s', 0],
  ])('parseDuration(%j) = %d ms', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 9);
  });

  it.each(['', '5x', '5', 'h', '-5s', '5 s', '1.h', '.5h', ' 5s', '5S', '1h 30m', '5µs'])('parseDuration(%j) throws', (text) => {
    expect(() => parseDuration(text)).toThrow(/is not a duration/);
  });

  it('parseDuration throws on non-strings', () => {
    expect(() => parseDuration(5 as unknown as string)).toThrow(/5 is not a duration/);
  });

  it.each([
    [0, '0s'],
    [1, '1ms'],
    [90_000, '1m30s'],
    [5_400_000, '1h30m'],
    [129_600_000, '1d12h'],
    [604_800_000, '1w'],
    [1_209_600_000 + 1, '2w1ms'],
    [0.0015, '1us500ns'],
    [1.000001, '1ms1ns'],
  ])('formatDuration(%d) = %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(formatDuration(ms))).toBeCloseTo(ms, 9);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('formatDuration(%d) throws', (ms) => {
    expect(() => formatDuration(ms)).toThrow(RangeError);
  });

  it('round-trips the defaults of the schemas', () => {
    for (const text of ['6h', '60s', '5s']) expect(formatDuration(parseDuration(text))).toBe(text === '60s' ? '1m' : text);
  });
});

describe('parseQuantity', () => {
  it.each([
    ['0', 0],
    ['4096', 4096],
    ['1k', 1000],
    ['16Mi', 16 * 1024 ** 2],
    ['200Mi', 200 * 1024 ** 2],
    ['5Gi', 5 * 1024 ** 3],
    ['1M', 1e6],
    ['2G', 2e9],
    ['1T', 1e12],
    ['1Ki', 1024],
    ['1Ti', 1024 ** 4],
    ['1.5Gi', 1.5 * 1024 ** 3],
    ['0.5k', 500],
    ['0.1', 1],
  ])('parseQuantity(%j) = %d', (text, bytes) => {
    expect(parseQuantity(text)).toBe(bytes);
  });

  it.each(['', '16MB', '16mi', '1K', '-1', '16 Mi', 'Mi', '1e3', '1.', '1Pi', '0x10'])('parseQuantity(%j) throws', (text) => {
    expect(() => parseQuantity(text)).toThrow(/is not a byte quantity/);
  });
});

describe('schemas', () => {
  type Node = Record<string, unknown>;
  const walk = (node: unknown, visit: (node: Node, where: string) => void, where = '#'): void => {
    if (Array.isArray(node)) node.forEach((n, i) => walk(n, visit, `${where}/${i}`));
    else if (node && typeof node === 'object') {
      visit(node as Node, where);
      for (const [key, value] of Object.entries(node)) {
        if (key !== 'default' && key !== 'enum' && key !== 'const') walk(value, visit, `${where}/${key}`);
      }
    }
  };

  it('has one schema per kind, each with apiVersion and kind constants', () => {
    expect(Object.keys(RESOURCE_SCHEMAS).sort()).toEqual([...RESOURCE_KINDS].sort());
    for (const kind of RESOURCE_KINDS) {
      const props = RESOURCE_SCHEMAS[kind].properties as Record<string, Node>;
      expect(props.apiVersion).toEqual({ const: 'backups.strata.dev/v1alpha1' });
      expect(props.kind).toEqual({ const: kind });
      expect(Object.keys(props)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
      expect(RESOURCE_SCHEMAS[kind].$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    }
  });

  it('loadResourceSchema returns a self-contained, fresh copy', () => {
    for (const kind of RESOURCE_KINDS) {
      const schema = loadResourceSchema(kind);
      const text = JSON.stringify(schema);
      expect(text).not.toContain('$ref');
      expect(text).not.toContain('$defs');
      schema.title = 'changed';
      expect(loadResourceSchema(kind).title).toBe(kind);
    }
  });

  it('every spec and status object is closed (additionalProperties: false)', () => {
    for (const kind of RESOURCE_KINDS) {
      const props = loadResourceSchema(kind).properties as Record<string, Node>;
      for (const part of ['spec', 'status'] as const) {
        walk(props[part], (node, where) => {
          if (node.type === 'object' && node.properties) expect(node.additionalProperties, `${kind} ${part}${where}`).toBe(false);
        });
      }
    }
  });

  it('every status embeds phase, message, observedGeneration and conditions', () => {
    for (const kind of RESOURCE_KINDS) {
      const status = (loadResourceSchema(kind).properties as Record<string, Node>).status as Node;
      expect(Object.keys(status.properties as Node).slice(0, 4)).toEqual(['phase', 'message', 'observedGeneration', 'conditions']);
    }
  });

  it('every pattern has an English description for error messages', () => {
    const patterns = new Set<string>();
    for (const schema of [COMMON_RESOURCE_SCHEMA, ...Object.values(RESOURCE_SCHEMAS)]) {
      walk(schema, (node) => {
        if (typeof node.pattern === 'string') patterns.add(node.pattern);
      });
    }
    for (const pattern of patterns) expect(PATTERN_DESCRIPTIONS.has(pattern), pattern).toBe(true);
  });

  it('the spec\'s defaults and bounds are in the schemas', () => {
    const at = (kind: ResourceKind, path: string): Node => {
      let node = loadResourceSchema(kind) as Node;
      for (const key of path.split('.')) node = (node.properties as Record<string, Node>)[key] as Node;
      return node;
    };
    expect(at('BackupPolicy', 'spec.compression.threads')).toMatchObject({ minimum: 0, maximum: 64 });
    expect(at('BackupPolicy', 'spec.compression.algorithm')).toMatchObject({ enum: ['zstd', 'none'], default: 'zstd' });
    expect(at('BackupPolicy', 'spec.compression.level')).toMatchObject({ enum: ['fastest', 'default', 'better', 'best'], default: 'default' });
    expect(at('BackupPolicy', 'spec.keepBackupObjects')).toMatchObject({ default: 20 });
    expect(at('BackupPolicy', 'spec.full.timeZone')).toMatchObject({ default: 'UTC', format: 'iana-time-zone' });
    expect(at('BackupPolicy', 'spec.full.schedule')).toMatchObject({ format: 'cron5' });
    expect(at('BackupPolicy', 'spec.full.startingDeadline')).toMatchObject({ default: '6h' });
    expect(at('BackupPolicy', 'spec.pitr.partialInterval')).toMatchObject({ default: '60s' });
    expect(at('BackupPolicy', 'spec.jobs.stallTimeout')).toMatchObject({ default: '60s' });
    expect(at('BackupPolicy', 'spec.verify.randomPointInTime')).toMatchObject({ default: true });
    expect(at('BackupStore', 'spec.upload.partSize')).toMatchObject({ default: '16Mi', quantityRange: { minimum: '5Mi', maximum: '5Gi' } });
    expect(at('BackupStore', 'spec.upload.concurrency')).toMatchObject({ default: 8, minimum: 1, maximum: 64 });
    expect(at('BackupStore', 'spec.encryption.ageRecipients')).toMatchObject({ minItems: 1 });
    expect(at('BackupStore', 'spec.s3.credentialsSecret.accessKeyIdKey')).toMatchObject({ default: 'accessKeyId' });
    expect(at('BackupStore', 'spec.s3.credentialsSecret.secretAccessKeyKey')).toMatchObject({ default: 'secretAccessKey' });
    expect(at('BackupTarget', 'spec.databases')).toMatchObject({ default: ['*'] });
    expect(at('BackupTarget', 'spec.credentials.secretRef.usernameKey')).toMatchObject({ default: 'username' });
    expect(at('BackupTarget', 'spec.credentials.secretRef.passwordKey')).toMatchObject({ default: 'password' });
    expect(at('BackupTarget', 'spec.exactCounts.maxRows')).toMatchObject({ default: 100000 });
    expect(at('BackupTarget', 'spec.exactCounts.timeout')).toMatchObject({ default: '5s' });
    expect(at('BackupTarget', 'spec.previews.rows')).toMatchObject({ default: 5 });
    expect(at('BackupTarget', 'spec.previews.maxValueLength')).toMatchObject({ default: 64 });
    expect(at('BackupTarget', 'spec.previews.logical')).toMatchObject({ default: false });
    expect(at('Restore', 'spec.runChecks')).toMatchObject({ default: true });
    expect(at('Restore', 'spec.destination.mode')).toMatchObject({ enum: ['sandbox', 'new', 'in-place', 'download'] });
    for (const kind of ['BackupTarget', 'Sandbox'] as const) expect(at(kind, 'spec.engine')).toMatchObject({ enum: ['postgres', 'mysql', 'mongodb'] });
  });
});
