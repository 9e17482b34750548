import { STRATA } from '@sigil/proto/strata';

/** The six custom resources of infra/k8s/crds (group backups.strata.dev, version v1alpha1). */
export const GROUP = STRATA.apiGroup;
export const VERSION = STRATA.apiVersion;
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Removed only after the catalog deleted the resource (for a target: after it released its replication slot). */
export const FINALIZER = `${GROUP}/catalog`;

export interface KindInfo {
  kind: string;
  plural: string;
  /**
   * The catalog stores the resource and deletes it on `DELETE /resources/{kind}/{ns}/{name}` (stores, policies,
   * targets): these get the finalizer. Backup and Restore documents ask for a run once; deleting the object leaves
   * the run and its backup alone, as the catalog has no delete for them. Sandbox documents are refused by the
   * catalog's apply in this release (they are created with POST /sandboxes); their status says so.
   */
  stored: boolean;
}

export const KINDS: readonly KindInfo[] = [
  { kind: 'BackupStore', plural: 'backupstores', stored: true },
  { kind: 'BackupPolicy', plural: 'backuppolicies', stored: true },
  { kind: 'BackupTarget', plural: 'backuptargets', stored: true },
  { kind: 'Backup', plural: 'backups', stored: false },
  { kind: 'Restore', plural: 'restores', stored: false },
  { kind: 'Sandbox', plural: 'sandboxes', stored: false },
];

export function kindInfo(kind: string): KindInfo {
  const info = KINDS.find((k) => k.kind === kind);
  if (!info) throw new Error(`not a Strata kind: ${kind}`);
  return info;
}

/** The API path of a collection (all namespaces when `namespace` is empty) or of one object. */
export function resourcePath(info: KindInfo, namespace: string, name?: string): string {
  const base = namespace ? `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${info.plural}` : `/apis/${GROUP}/${VERSION}/${info.plural}`;
  return name ? `${base}/${name}` : base;
}
