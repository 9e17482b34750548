/** The parts of the resource specs the catalog reads (defaults already applied by validation). */
export interface SecretReference {
  namespace?: string;
  name: string;
  optional?: boolean;
}

export interface StoreSpec {
  s3: {
    endpoint: string;
    region: string;
    bucket: string;
    pathStyle?: boolean;
    credentialsSecret: SecretReference & { accessKeyIdKey?: string; secretAccessKeyKey?: string };
    disableConditionalPut?: boolean;
  };
  prefix?: string;
  encryption: {
    ageRecipients: string[];
    identitySecret?: SecretReference;
    catalogRecipients?: string[];
    catalogIdentitySecret?: SecretReference;
  };
  upload?: { partSize?: string; concurrency?: number };
  readOnly?: boolean;
}

export interface PolicySpec {
  store: string;
  full: { schedule: string; timeZone?: string; jitter?: string; startingDeadline?: string };
  pitr?: { enabled?: boolean; window?: string; partialInterval?: string };
  retain?: { daily?: number; weekly?: number; monthly?: number; yearly?: number };
  limits?: { perHost?: number; perTarget?: number; global?: number; priority?: number; bandwidth?: string; restoreBandwidth?: string };
  verify?: { schedule?: string; timeZone?: string; checks?: string[]; randomPointInTime?: boolean };
  jobs?: { activeDeadline?: string; backoffLimit?: number; stallTimeout?: string; cpu?: string; memory?: string };
  compression?: { algorithm?: 'zstd' | 'none'; level?: 'fastest' | 'default' | 'better' | 'best'; threads?: number };
  sandbox?: { defaultTTL?: string; maxTTL?: string };
  keepBackupObjects?: number;
}

export interface TargetSpec {
  engine: 'postgres' | 'mysql' | 'mongodb';
  endpoint: { host: string; port?: number };
  databases?: string[];
  credentials: { secretRef: { name: string; namespace?: string; usernameKey?: string; passwordKey?: string } };
  policy: string;
  pitr?: { enabled?: boolean; window?: string };
  scope?: { mode?: string; excludeData?: string[]; excludeTables?: string[] };
  mask?: string[];
  suspend?: boolean;
}

export const DEFAULT_PORTS: Record<TargetSpec['engine'], number> = { postgres: 5432, mysql: 3306, mongodb: 27017 };

/** Labels carrying the console's grouping fields (the target spec has none). */
export const LABELS = { org: 'backups.strata.dev/org', project: 'backups.strata.dev/project', env: 'backups.strata.dev/env' } as const;
