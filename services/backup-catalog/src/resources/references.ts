import { ageIdentityToRecipient, isAgeRecipient } from '@strata/stream';
import type { BackupPolicySpec as PolicySpec, BackupStoreSpec as StoreSpec, BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import { REASONS } from './conditions.ts';
import type { DbOrTx } from '../db.ts';
import type { ResourceRepository, StoredKind, StoredResource } from './resources.ts';
import type { SecretStore } from './secrets.ts';
import { findPolicy, findStore, SERVICE_NAMESPACE } from './stores.ts';

/** Something a resource names that is missing or unusable: the field that names it, a condition reason, a sentence. */
export interface ReferenceProblem {
  path: string;
  reason: string;
  message: string;
}

export interface ReferenceDeps {
  resources: ResourceRepository;
  secrets: SecretStore;
}

/** A stored resource with the spec type of its kind. */
export type TypedResource =
  | (StoredResource<StoreSpec> & { kind: 'BackupStore' })
  | (StoredResource<PolicySpec> & { kind: 'BackupPolicy' })
  | (StoredResource<TargetSpec> & { kind: 'BackupTarget' });

/** Specs were validated against their kind's schema when applied. */
export function typed(resource: StoredResource): TypedResource {
  return resource as unknown as TypedResource;
}

/** Every problem of a resource that the catalog's own data shows (no network): the apply's warnings and Ready's reasons. */
export async function referenceProblems(conn: DbOrTx, deps: ReferenceDeps, stored: StoredResource): Promise<ReferenceProblem[]> {
  const resource = typed(stored);
  if (resource.kind === 'BackupStore') return storeProblems(conn, deps, resource);
  if (resource.kind === 'BackupPolicy') return policyProblems(conn, deps, resource);
  return targetProblems(conn, deps, resource);
}

interface SecretField {
  path: string;
  namespace: string;
  name: string;
  keys: Array<{ key: string; path: string }>;
}

async function secretProblem(conn: DbOrTx, secrets: SecretStore, field: SecretField): Promise<ReferenceProblem | undefined> {
  const data = await secrets.read(conn, field.namespace, field.name);
  const where = `secret ${field.namespace}/${field.name}`;
  if (!data) return { path: field.path, reason: REASONS.secretNotFound, message: `${where} does not exist` };
  const missing = field.keys.find((k) => data[k.key] === undefined);
  if (missing) return { path: missing.path, reason: REASONS.secretNotFound, message: `${where} has no key "${missing.key}"` };
  return undefined;
}

async function storeProblems(conn: DbOrTx, deps: ReferenceDeps, store: StoredResource<StoreSpec>): Promise<ReferenceProblem[]> {
  const { s3, encryption } = store.spec;
  const own = store.metadata.namespace;
  const problems: Array<ReferenceProblem | undefined> = [];
  const credentials = s3.credentialsSecret;
  problems.push(
    await secretProblem(conn, deps.secrets, {
      path: 'spec.s3.credentialsSecret.name',
      namespace: credentials.namespace ?? own,
      name: credentials.name,
      keys: [
        { key: credentials.accessKeyIdKey ?? 'accessKeyId', path: 'spec.s3.credentialsSecret.accessKeyIdKey' },
        { key: credentials.secretAccessKeyKey ?? 'secretAccessKey', path: 'spec.s3.credentialsSecret.secretAccessKeyKey' },
      ],
    }),
  );
  for (const field of ['ageRecipients', 'catalogRecipients'] as const) {
    (encryption[field] ?? []).forEach((recipient, index) => {
      if (!isAgeRecipient(recipient)) {
        problems.push({ path: `spec.encryption.${field}[${index}]`, reason: REASONS.invalidRecipient, message: `${recipient} is not a valid age X25519 recipient (its checksum does not match)` });
      }
    });
  }
  for (const field of ['identitySecret', 'catalogIdentitySecret'] as const) {
    const ref = encryption[field];
    if (!ref) continue;
    const namespace = ref.namespace ?? own;
    const missing = await secretProblem(conn, deps.secrets, { path: `spec.encryption.${field}.name`, namespace, name: ref.name, keys: [{ key: 'identity', path: `spec.encryption.${field}.name` }] });
    problems.push(missing ?? (await identityProblem(conn, deps.secrets, field, namespace, ref.name)));
  }
  return problems.filter((p): p is ReferenceProblem => p !== undefined);
}

async function identityProblem(conn: DbOrTx, secrets: SecretStore, field: string, namespace: string, name: string): Promise<ReferenceProblem | undefined> {
  const identity = (await secrets.read(conn, namespace, name))?.identity ?? '';
  try {
    ageIdentityToRecipient(identity);
    return undefined;
  } catch (error) {
    return { path: `spec.encryption.${field}.name`, reason: REASONS.invalidIdentity, message: `secret ${namespace}/${name}: ${(error as Error).message}` };
  }
}

async function policyProblems(conn: DbOrTx, deps: ReferenceDeps, policy: StoredResource<PolicySpec>): Promise<ReferenceProblem[]> {
  const { namespace } = policy.metadata;
  if (await findStore(conn, deps.resources, namespace, policy.spec.store)) return [];
  return [{ path: 'spec.store', reason: REASONS.storeNotFound, message: `store ${policy.spec.store} does not exist in namespace ${namespace} or ${SERVICE_NAMESPACE}` }];
}

async function targetProblems(conn: DbOrTx, deps: ReferenceDeps, target: StoredResource<TargetSpec>): Promise<ReferenceProblem[]> {
  const { namespace } = target.metadata;
  const problems: Array<ReferenceProblem | undefined> = [];
  const policy = await findPolicy(conn, deps.resources, namespace, target.spec.policy);
  if (!policy) {
    problems.push({ path: 'spec.policy', reason: REASONS.policyNotFound, message: `policy ${target.spec.policy} does not exist in namespace ${namespace} or ${SERVICE_NAMESPACE}` });
  } else if (!(await findStore(conn, deps.resources, policy.metadata.namespace, policy.spec.store))) {
    problems.push({ path: 'spec.policy', reason: REASONS.storeNotFound, message: `policy ${policy.metadata.namespace}/${policy.metadata.name} names store ${policy.spec.store}, which does not exist` });
  }
  const ref = target.spec.credentials.secretRef;
  // The credentials secret lives in the target's own namespace; the password may be absent (trust authentication).
  problems.push(
    await secretProblem(conn, deps.secrets, {
      path: 'spec.credentials.secretRef.name',
      namespace,
      name: ref.name,
      keys: [{ key: ref.usernameKey ?? 'username', path: 'spec.credentials.secretRef.usernameKey' }],
    }),
  );
  if (target.spec.engine === 'mongodb') {
    problems.push({ path: 'spec.engine', reason: REASONS.unsupportedEngine, message: 'mongodb backups are not available in this release' });
  }
  return problems.filter((p): p is ReferenceProblem => p !== undefined);
}

/** What a resource names, by kind and name (namespaces are left out: a wider match only checks a little more). */
function namesOf(stored: StoredResource): Array<{ kind: StoredKind | 'Secret'; name: string }> {
  const resource = typed(stored);
  if (resource.kind === 'BackupTarget') {
    return [{ kind: 'BackupPolicy', name: resource.spec.policy }, { kind: 'Secret', name: resource.spec.credentials.secretRef.name }];
  }
  if (resource.kind === 'BackupPolicy') return [{ kind: 'BackupStore', name: resource.spec.store }];
  const { s3, encryption } = resource.spec;
  return [s3.credentialsSecret, encryption.identitySecret, encryption.catalogIdentitySecret]
    .filter((ref) => ref !== undefined)
    .map((ref) => ({ kind: 'Secret' as const, name: ref.name }));
}

/**
 * The resources whose status may change when these changed: the changed ones themselves and, transitively, every
 * resource naming one of them (a target names its policy, which names its store, which names its secrets).
 */
export function affectedBy(all: StoredResource[], changed: Array<{ kind: string; namespace: string; name: string }>): StoredResource[] {
  const names = new Set(changed.map((c) => `${c.kind}/${c.name}`));
  const keys = new Set(changed.map((c) => `${c.kind}/${c.namespace}/${c.name}`));
  const affected = all.filter((r) => keys.has(`${r.kind}/${r.metadata.namespace}/${r.metadata.name}`));
  let grown = true;
  while (grown) {
    grown = false;
    for (const resource of all) {
      if (affected.includes(resource) || !namesOf(resource).some((n) => names.has(`${n.kind}/${n.name}`))) continue;
      affected.push(resource);
      names.add(`${resource.kind}/${resource.metadata.name}`);
      grown = true;
    }
  }
  return affected;
}
