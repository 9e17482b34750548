import type { StrataEngine } from '../strata-jobs.ts';
import type { RESOURCE_API_VERSION, ResourceKind } from './kinds.ts';

/** Document types (as returned by validateResource: defaults applied). */
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
