import { STRATA } from '../strata.ts';

/** `backups.strata.dev/v1alpha1`. */
export const RESOURCE_API_VERSION = `${STRATA.apiGroup}/${STRATA.apiVersion}` as const;

/** The six kinds, in dependency order (a store before the policies that use it, …). */
export const RESOURCE_KINDS = ['BackupStore', 'BackupPolicy', 'BackupTarget', 'Backup', 'Restore', 'Sandbox'] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];

export function isResourceKind(value: unknown): value is ResourceKind {
  return typeof value === 'string' && (RESOURCE_KINDS as readonly string[]).includes(value);
}
