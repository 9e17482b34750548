/**
 * Every product word of Strata that appears inside an identifier, a header, a path or a field name.
 * Change the product's name here and nowhere else.
 */
export const STRATA = {
  name: 'Strata',
  apiGroup: 'backups.strata.dev',
  apiVersion: 'v1alpha1',
  roleExtension: 'x-strata-role',
  /** The Manifest member that holds the service version (`svcVersion` in the spec). */
  versionField: 'strataVersion',
  apiPrefix: '/api/v1',
  /** Header carrying the gateway's signed internal principal for Strata callers. */
  principalHeader: 'x-strata-principal',
  /** Manifest format version written by this release. */
  manifestVersion: 1,
  /** Release of the service, reported by whoami, settings and manifests. */
  version: '0.1.0',
} as const;

/** Roles, lowest first (spec part 5). */
export const STRATA_ROLES = ['viewer', 'operator', 'restorer', 'restorer-admin'] as const;
export type StrataRole = (typeof STRATA_ROLES)[number];

export function isStrataRole(value: unknown): value is StrataRole {
  return typeof value === 'string' && (STRATA_ROLES as readonly string[]).includes(value);
}

/** True when `role` is at least `required`. */
export function roleAtLeast(role: StrataRole, required: StrataRole): boolean {
  return STRATA_ROLES.indexOf(role) >= STRATA_ROLES.indexOf(required);
}

/** The console API's Principal (spec 2.1). */
export interface StrataPrincipal {
  id: string;
  email: string;
  role: StrataRole;
  groups: string[];
  orgs: string[];
  projects: string[];
  service: boolean;
}

/** The standard port of each engine, used when a target's endpoint names none. */
export const DEFAULT_ENGINE_PORTS = { postgres: 5432, mysql: 3306, mongodb: 27017 } as const;

/** Labels that carry the console's grouping fields (a target's spec has none of its own). */
export const STRATA_LABELS = {
  org: `${STRATA.apiGroup}/org`,
  project: `${STRATA.apiGroup}/project`,
  env: `${STRATA.apiGroup}/env`,
} as const;
