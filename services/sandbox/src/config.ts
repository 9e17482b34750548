import os from 'node:os';
import path from 'node:path';
import { baseServiceConfig, z } from '@sigil/kit/config';

export const sandboxConfig = baseServiceConfig.extend({
  /** 32 bytes, base64: seals the sandboxes' passwords (the same key as the catalog's secret store). */
  STRATA_SECRETS_KEY: z.string().min(44),
  /** JWK of the internal Ed25519 private key: signs this service's principal for the catalog's internal routes. */
  INTERNAL_JWT_PRIVATE_KEY: z.string().min(1),
  BACKUP_CATALOG_URL: z.string().url(),
  /** The local runtime keeps each sandbox's server and data under this folder. */
  SANDBOX_DIR: z.string().min(1).default(path.join(os.tmpdir(), 'strata-sandboxes')),
  /** How often the reconciler looks at every sandbox (expiry, size, servers that stopped). */
  SANDBOX_INTERVAL_MS: z.coerce.number().int().min(50).default(1000),
  /** Lifetimes when the target's policy sets none. */
  SANDBOX_DEFAULT_TTL: z.string().default('4h'),
  SANDBOX_MAX_TTL: z.string().default('7d'),
  /** Where sandbox servers run: processes of this machine, or pods of a Kubernetes cluster (docs/strata-sandboxes.md). */
  SANDBOX_RUNTIME: z.enum(['local', 'kubernetes']).default('local'),
  SANDBOX_NAMESPACE: z.string().default('strata-sandboxes'),
  /** `{major}` is replaced by the backup's PostgreSQL major version. */
  SANDBOX_POSTGRES_IMAGE: z.string().default('postgres:{major}'),
  SANDBOX_MYSQL_IMAGE: z.string().default('mariadb:11'),
  SANDBOX_STORAGE_CLASS: z.string().optional(),
  SANDBOX_CPU: z.string().optional(),
  SANDBOX_MEMORY: z.string().optional(),
  /** The statement timeout of the query operation. */
  SANDBOX_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
});

export type SandboxConfig = z.infer<typeof sandboxConfig>;
