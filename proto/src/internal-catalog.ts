/**
 * What the backup catalog answers the sandbox service: a contract between services, outside the public API.
 *
 * Every call carries `x-strata-principal`: a token signed with the internal key whose principal has `service: true`
 * and `id` one of CATALOG_CALLERS; its `orgs` and `projects` are those of the user the caller acts for, so the
 * catalog scopes targets as it would for that user. Any other principal is 401. Errors are `{ "error": "..." }` with
 * the status the public API would give (400, 404, 409, 422).
 *
 *   POST /internal/v1/sandbox-restores                          PrepareSandboxRestore → 201 SandboxRestorePlan
 *   POST /internal/v1/sandbox-restores/{ns}/{name}/start        StartSandboxRestore   → 200 { restoreId }
 *   POST /internal/v1/sandbox-restores/{ns}/{name}/fail         FailSandboxRestore    → 200 {}
 *
 * `prepare` plans the restore (the backup, and for a moment of a window the WAL or binlogs to replay) and records a
 * Restore in phase `Pending` that names the sandbox; nothing moves yet. Once the sandbox's server runs, `start`
 * hands the restore to a mover with the server's address and admin credentials (sealed in the job, never stored);
 * each source database keeps its own name. The mover's `restore.succeeded` / `restore.failed` reports carry the
 * `restoreId`. `fail` ends a prepared restore whose sandbox could not start.
 */
import { randomBytes } from 'node:crypto';
import type { StrataRole } from './strata.ts';

export const INTERNAL_CATALOG_PREFIX = '/internal/v1/sandbox-restores';

export const sandboxRestorePath = (namespace: string, name: string, action: 'start' | 'fail') =>
  `${INTERNAL_CATALOG_PREFIX}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${action}`;

/** The services allowed to call these endpoints (the `id` of their service principal). */
export const CATALOG_CALLERS = ['sandbox'] as const;

/** The role a service principal of the sandbox service carries: the catalog's own checks still apply to what it asks. */
export const SANDBOX_SERVICE_ROLE: StrataRole = 'restorer';

/** A new sandbox's name: its target's, `-sbx-` and six random hex digits (a DNS label of at most 63 characters). */
export function sandboxNameFor(target: string): string {
  return `${target.slice(0, 50).replace(/-+$/, '')}-sbx-${randomBytes(3).toString('hex')}`;
}

export interface PrepareSandboxRestore {
  /** The public RestoreRequest (mode `sandbox`): `target`, `backupID`, `at`, `tables`, `ttl`, `expose`, `reason`. */
  request: {
    target: string;
    backupID?: string;
    at?: string;
    tables?: string[];
    ttl?: string;
    expose?: boolean;
    reason?: string;
  };
  sandbox: { namespace: string; name: string };
  /** Who asked (e-mail or id), recorded on the Restore. */
  requestedBy: string;
}

export interface SandboxRestorePlan {
  restore: { namespace: string; name: string; id: string };
  backupID: string;
  engine: 'postgres' | 'mysql' | 'mongodb';
  /** The source server's major version (postgres: 15, 16 ...; mysql: the version string's major). */
  major: number;
  serverVersion: string;
  /** The databases the sandbox will hold, in the target's order. */
  databases: string[];
  /** The moment the data will show: the recovery target, or the backup's consistent-at time. */
  time: string;
  /** Raw bytes of the backup (before compression). */
  backupBytes: number;
  target: {
    namespace: string;
    name: string;
    /** Column-name regular expressions masked in query results. */
    mask: string[];
    /** The target's `sandbox` settings: `sizeLimit`, `postRestoreSQL`, `image`, `cpu`, `memory`. */
    sandbox: { sizeLimit?: string; postRestoreSQL?: string[]; image?: string; storageClass?: string; cpu?: string; memory?: string };
    labels: Record<string, string>;
  };
  /** The policy's `sandbox` lifetimes. */
  policy: { defaultTTL?: string; maxTTL?: string };
  /** The request that plans this same restore again (a sandbox reset): the backup, or the moment of a window, and the tables. */
  source: { backupID?: string; at?: string; tables?: string[] };
  message: string;
}

export interface StartSandboxRestore {
  host: string;
  port: number;
  username: string;
  password: string;
}

export interface FailSandboxRestore {
  message: string;
}
