import { AppError } from '@sigil/kit/errors';
import { seal, unseal } from '@sigil/kit/crypto';
import type { DbOrTx } from '../db.ts';

/**
 * The secret store of deployments without Kubernetes: one row per secret in the catalog's database,
 * the key/value map sealed with AES-256-GCM under STRATA_SECRETS_KEY (the namespace/name is the
 * additional data, so a sealed value cannot be moved to another secret). Values never leave the
 * catalog except sealed inside a job for the mover.
 */
export interface SecretRef {
  namespace: string;
  name: string;
  key: string;
  optional?: boolean;
}

export interface SecretSummary {
  namespace: string;
  name: string;
  keys: string[];
  updatedAt: string;
}

export interface SecretStore {
  put(db: DbOrTx, namespace: string, name: string, data: Record<string, string>): Promise<'created' | 'updated' | 'unchanged'>;
  read(db: DbOrTx, namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /** The value a reference names; throws a 422-style error naming the secret and key when absent. */
  resolve(db: DbOrTx, ref: SecretRef): Promise<string | undefined>;
  list(db: DbOrTx): Promise<SecretSummary[]>;
  remove(db: DbOrTx, namespace: string, name: string): Promise<boolean>;
}

export function createSecretStore(key: Buffer): SecretStore {
  const context = (namespace: string, name: string) => `secret:${namespace}/${name}`;
  const read = async (db: DbOrTx, namespace: string, name: string) => {
    const row = await db.secret.findUnique({ where: { namespace_name: { namespace, name } } });
    return row ? (JSON.parse(unseal(key, row.sealed, context(namespace, name))) as Record<string, string>) : undefined;
  };
  return {
    async put(db, namespace, name, data) {
      const existing = await read(db, namespace, name);
      if (existing && sameData(existing, data)) return 'unchanged';
      const sealed = seal(key, JSON.stringify(data), context(namespace, name));
      const keys = Object.keys(data).sort();
      await db.secret.upsert({
        where: { namespace_name: { namespace, name } },
        create: { namespace, name, sealed, keys },
        update: { sealed, keys },
      });
      return existing ? 'updated' : 'created';
    },
    read,
    async resolve(db, ref) {
      const data = await read(db, ref.namespace, ref.name);
      const value = data?.[ref.key];
      if (value !== undefined) return value;
      if (ref.optional) return undefined;
      throw new AppError(
        'unprocessable',
        data ? `Secret ${ref.namespace}/${ref.name} has no key "${ref.key}".` : `Secret ${ref.namespace}/${ref.name} does not exist.`,
      );
    },
    async list(db) {
      const rows = await db.secret.findMany({ orderBy: [{ namespace: 'asc' }, { name: 'asc' }] });
      return rows.map((r) => ({ namespace: r.namespace, name: r.name, keys: r.keys, updatedAt: r.updatedAt.toISOString() }));
    },
    async remove(db, namespace, name) {
      const { count } = await db.secret.deleteMany({ where: { namespace, name } });
      return count > 0;
    },
  };
}

function sameData(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
