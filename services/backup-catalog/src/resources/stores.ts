import { AppError } from '@sigil/kit/errors';
import { parseQuantity } from '@sigil/proto/units';
import type { StoreAccess } from '@sigil/proto/strata-jobs';
import type { DbOrTx } from '../db.ts';
import type { ResourceRepository, StoredResource } from './resources.ts';
import type { SecretStore } from './secrets.ts';
import type { BackupPolicySpec as PolicySpec, BackupStoreSpec as StoreSpec, BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';

export interface TargetBundle {
  target: StoredResource<TargetSpec>;
  policy: StoredResource<PolicySpec>;
  store: StoredResource<StoreSpec>;
}

export const SERVICE_NAMESPACE = 'strata-system';

/** Policies are looked up in the target's namespace first, then in the service's own (spec 2.2). */
export async function findPolicy(db: DbOrTx, resources: ResourceRepository, namespace: string, name: string): Promise<StoredResource<PolicySpec> | undefined> {
  return (await resources.get<PolicySpec>(db, 'BackupPolicy', namespace, name)) ?? (await resources.get<PolicySpec>(db, 'BackupPolicy', SERVICE_NAMESPACE, name));
}

export async function findStore(db: DbOrTx, resources: ResourceRepository, namespace: string, name: string): Promise<StoredResource<StoreSpec> | undefined> {
  return (await resources.get<StoreSpec>(db, 'BackupStore', namespace, name)) ?? (await resources.get<StoreSpec>(db, 'BackupStore', SERVICE_NAMESPACE, name));
}

/** The target with its policy and store, or a 422 naming what is missing. */
export async function loadTargetBundle(db: DbOrTx, resources: ResourceRepository, namespace: string, name: string): Promise<TargetBundle> {
  const target = await resources.get<TargetSpec>(db, 'BackupTarget', namespace, name);
  if (!target) throw new AppError('not-found', `Target ${namespace}/${name} was not found.`);
  const policy = await findPolicy(db, resources, namespace, target.spec.policy);
  if (!policy) throw new AppError('unprocessable', `Target ${namespace}/${name} names policy ${target.spec.policy}, which does not exist.`);
  const store = await findStore(db, resources, policy.metadata.namespace, policy.spec.store);
  if (!store) throw new AppError('unprocessable', `Policy ${policy.metadata.namespace}/${policy.metadata.name} names store ${policy.spec.store}, which does not exist.`);
  return { target, policy, store };
}

export async function storeAccess(db: DbOrTx, secrets: SecretStore, store: StoredResource<StoreSpec>): Promise<StoreAccess> {
  const { s3, upload } = store.spec;
  const ref = s3.credentialsSecret;
  const namespace = ref.namespace ?? store.metadata.namespace;
  const accessKeyId = await secrets.resolve(db, { namespace, name: ref.name, key: ref.accessKeyIdKey ?? 'accessKeyId' });
  const secretAccessKey = await secrets.resolve(db, { namespace, name: ref.name, key: ref.secretAccessKeyKey ?? 'secretAccessKey' });
  return {
    endpoint: s3.endpoint,
    region: s3.region,
    bucket: s3.bucket,
    prefix: store.spec.prefix ?? '',
    pathStyle: s3.pathStyle ?? true,
    accessKeyId: accessKeyId ?? '',
    secretAccessKey: secretAccessKey ?? '',
    disableConditionalPut: s3.disableConditionalPut ?? false,
    partSizeBytes: parseQuantity(upload?.partSize ?? '16Mi'),
    concurrency: upload?.concurrency ?? 8,
  };
}

/** The age identity a reference names (key `identity`), or a 422 saying which secret is missing. */
export async function storeIdentity(db: DbOrTx, secrets: SecretStore, store: StoredResource<StoreSpec>, which: 'identitySecret' | 'catalogIdentitySecret'): Promise<string> {
  const ref = store.spec.encryption[which];
  if (!ref) throw new AppError('unprocessable', `Store ${store.metadata.name} has no ${which}; it is needed to decrypt.`);
  const value = await secrets.resolve(db, { namespace: ref.namespace ?? store.metadata.namespace, name: ref.name, key: 'identity' });
  if (!value) throw new AppError('unprocessable', `Store ${store.metadata.name}: secret ${ref.name} has no identity.`);
  return value;
}

export async function databaseCredentials(db: DbOrTx, secrets: SecretStore, target: StoredResource<TargetSpec>): Promise<{ username: string; password: string }> {
  const ref = target.spec.credentials.secretRef;
  // The credentials Secret lives in the target's own namespace (the schema has no namespace field for it).
  const namespace = target.metadata.namespace;
  const username = await secrets.resolve(db, { namespace, name: ref.name, key: ref.usernameKey ?? 'username' });
  const password = await secrets.resolve(db, { namespace, name: ref.name, key: ref.passwordKey ?? 'password', optional: true });
  return { username: username ?? '', password: password ?? '' };
}
