import { randomUUID } from 'node:crypto';
import { AppError } from '@sigil/kit/errors';
import { STRATA, type StrataPrincipal } from '@sigil/proto/strata';
import { validateResource } from '@sigil/proto/resources';
import { bumpCatalogVersion, type Db, type DbOrTx, type Tx } from './db.ts';
import type { SecretStore } from './secrets.ts';

export const STORED_KINDS = ['BackupStore', 'BackupPolicy', 'BackupTarget'] as const;
export type StoredKind = (typeof STORED_KINDS)[number];
const API_VERSION = `${STRATA.apiGroup}/${STRATA.apiVersion}`;

export interface AppliedItem {
  kind: string;
  namespace: string;
  name: string;
  action: 'created' | 'updated' | 'unchanged';
}

export interface StoredResource<Spec = Record<string, unknown>> {
  apiVersion: string;
  kind: StoredKind;
  metadata: { name: string; namespace: string; uid: string; generation: number; labels?: Record<string, string>; annotations?: Record<string, string>; creationTimestamp: string };
  spec: Spec;
  status: Record<string, unknown>;
}

/** Runs Backup and Restore documents of an apply inside the apply's transaction. */
export interface RunRequests {
  backup(tx: Tx, doc: { namespace: string; name: string; spec: Record<string, unknown> }, principal: StrataPrincipal): Promise<AppliedItem['action']>;
  restore(tx: Tx, doc: { namespace: string; name: string; spec: Record<string, unknown> }, principal: StrataPrincipal): Promise<AppliedItem['action']>;
}

/** The documents of a request body (YAML is parsed by the console app): a JSON object, an array, or `kind: List`. */
export function parseDocuments(body: unknown): unknown[] {
  let docs: unknown[];
  if (Array.isArray(body)) docs = body;
  else if (body && typeof body === 'object') docs = [body];
  else throw new AppError('validation-failed', 'body: expected one or more resource documents');
  docs = docs.flatMap((doc) => (isList(doc) ? (doc as { items: unknown[] }).items : [doc]));
  if (docs.length === 0) throw new AppError('validation-failed', 'body: no resource documents found');
  return docs;
}

function isList(doc: unknown): boolean {
  const d = doc as { kind?: unknown; items?: unknown };
  return typeof d?.kind === 'string' && d.kind.endsWith('List') && Array.isArray(d.items);
}

interface SecretDoc {
  namespace: string;
  name: string;
  data: Record<string, string>;
}

type Validated =
  | { kind: StoredKind; namespace: string; name: string; doc: { metadata: Record<string, unknown>; spec: Record<string, unknown> } }
  | { kind: 'Backup' | 'Restore'; namespace: string; name: string; doc: { metadata: Record<string, unknown>; spec: Record<string, unknown> } }
  | { kind: 'Secret'; namespace: string; name: string; secret: SecretDoc };

/** Validates every document before anything is written: one bad field fails the whole apply. */
export function validateDocuments(docs: unknown[]): Validated[] {
  const seen = new Set<string>();
  return docs.map((doc, index) => {
    const label = describe(doc, index);
    const item = validateOne(doc, label);
    const key = `${item.kind}/${item.namespace}/${item.name}`;
    if (seen.has(key)) throw new AppError('validation-failed', `${label}: appears twice in this apply`);
    seen.add(key);
    return item;
  });
}

function describe(doc: unknown, index: number): string {
  const d = doc as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
  const kind = typeof d?.kind === 'string' ? d.kind : `document ${index + 1}`;
  const name = typeof d?.metadata?.name === 'string' ? d.metadata.name : undefined;
  const namespace = typeof d?.metadata?.namespace === 'string' ? d.metadata.namespace : 'default';
  return name ? `${kind} ${namespace}/${name}` : kind;
}

function validateOne(doc: unknown, label: string): Validated {
  const d = doc as { apiVersion?: unknown; kind?: unknown };
  if (d?.kind === 'Secret' && d.apiVersion === 'v1') return validateSecret(doc as Record<string, unknown>, label);
  const result = validateResource(doc);
  if (!result.ok) {
    const first = result.errors[0];
    const text = first ? (first.message.startsWith(first.path) ? first.message : `${first.path}: ${first.message}`) : 'is not valid';
    const more = result.errors.length > 1 ? ` (and ${result.errors.length - 1} more)` : '';
    throw new AppError('validation-failed', `${label}: ${text}${more}`);
  }
  const resource = result.resource as unknown as { kind: string; metadata: Record<string, unknown> & { name: string; namespace: string }; spec: Record<string, unknown> };
  const { kind, metadata } = resource;
  if (kind === 'Sandbox') {
    throw new AppError('unprocessable', `${label}: Sandbox resources are served by the sandbox service, which this deployment does not run`);
  }
  return { kind: kind as StoredKind | 'Backup' | 'Restore', namespace: metadata.namespace, name: metadata.name, doc: { metadata, spec: resource.spec } } as Validated;
}

const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const KEY = /^[-._a-zA-Z0-9]+$/;

function validateSecret(doc: Record<string, unknown>, label: string): Validated {
  const metadata = (doc.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  if (typeof metadata.name !== 'string' || !NAME.test(metadata.name)) throw new AppError('validation-failed', `${label}: metadata.name: must be a lowercase DNS name`);
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : 'default';
  if (!NAME.test(namespace)) throw new AppError('validation-failed', `${label}: metadata.namespace: must be a lowercase DNS name`);
  const data: Record<string, string> = {};
  for (const [field, decode] of [['data', true], ['stringData', false]] as const) {
    const map = doc[field];
    if (map === undefined) continue;
    if (!map || typeof map !== 'object' || Array.isArray(map)) throw new AppError('validation-failed', `${label}: ${field}: must be a map of strings`);
    for (const [key, value] of Object.entries(map)) {
      if (!KEY.test(key)) throw new AppError('validation-failed', `${label}: ${field}.${key}: is not a valid key`);
      if (typeof value !== 'string') throw new AppError('validation-failed', `${label}: ${field}.${key}: must be a string`);
      if (decode && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw new AppError('validation-failed', `${label}: data.${key}: must be base64`);
      data[key] = decode ? Buffer.from(value, 'base64').toString('utf8') : value;
    }
  }
  if (Object.keys(data).length === 0) throw new AppError('validation-failed', `${label}: data: a secret needs at least one key`);
  return { kind: 'Secret', namespace, name: metadata.name, secret: { namespace, name: metadata.name, data } };
}

export interface ResourceRepository {
  apply(body: unknown, principal: StrataPrincipal, runs: RunRequests): Promise<{ items: AppliedItem[]; version: bigint }>;
  get<Spec = Record<string, unknown>>(db: DbOrTx, kind: StoredKind, namespace: string, name: string): Promise<StoredResource<Spec> | undefined>;
  list<Spec = Record<string, unknown>>(db: DbOrTx, kind?: StoredKind): Promise<Array<StoredResource<Spec>>>;
  remove(kind: StoredKind, namespace: string, name: string): Promise<boolean>;
  patchStatus(db: DbOrTx, kind: StoredKind, namespace: string, name: string, status: Record<string, unknown>): Promise<void>;
  patchSpec(db: DbOrTx, kind: StoredKind, namespace: string, name: string, spec: Record<string, unknown>): Promise<void>;
}

export function createResourceRepository(db: Db, secrets: SecretStore): ResourceRepository {
  const toStored = <Spec>(row: { kind: string; namespace: string; name: string; uid: string; generation: number; spec: unknown; status: unknown; metadata: unknown; createdAt: Date }): StoredResource<Spec> => {
    const meta = (row.metadata ?? {}) as { labels?: Record<string, string>; annotations?: Record<string, string> };
    return {
      apiVersion: API_VERSION,
      kind: row.kind as StoredKind,
      metadata: {
        name: row.name,
        namespace: row.namespace,
        uid: row.uid,
        generation: row.generation,
        ...(meta.labels ? { labels: meta.labels } : {}),
        ...(meta.annotations ? { annotations: meta.annotations } : {}),
        creationTimestamp: row.createdAt.toISOString(),
      },
      spec: row.spec as Spec,
      status: (row.status ?? {}) as Record<string, unknown>,
    };
  };
  return {
    async apply(body, principal, runs) {
      const items = validateDocuments(parseDocuments(body));
      return db.$transaction(async (tx) => {
        const applied: AppliedItem[] = [];
        for (const item of items) {
          const { kind, namespace, name } = item;
          let action: AppliedItem['action'];
          if (item.kind === 'Secret') action = await secrets.put(tx, namespace, name, item.secret.data);
          else if (item.kind === 'Backup') action = await runs.backup(tx, { namespace, name, spec: item.doc.spec }, principal);
          else if (item.kind === 'Restore') action = await runs.restore(tx, { namespace, name, spec: item.doc.spec }, principal);
          else action = await upsert(tx, item.kind, namespace, name, item.doc);
          applied.push({ kind, namespace, name, action });
        }
        const version = applied.some((a) => a.action !== 'unchanged') ? await bumpCatalogVersion(tx) : 0n;
        return { items: applied, version };
      });
    },
    async get(conn, kind, namespace, name) {
      const row = await conn.resource.findUnique({ where: { kind_namespace_name: { kind, namespace, name } } });
      return row ? toStored(row) : undefined;
    },
    async list(conn, kind) {
      const rows = await conn.resource.findMany({ where: kind ? { kind } : {}, orderBy: [{ kind: 'asc' }, { namespace: 'asc' }, { name: 'asc' }] });
      return rows.map((row) => toStored(row));
    },
    async remove(kind, namespace, name) {
      return db.$transaction(async (tx) => {
        const { count } = await tx.resource.deleteMany({ where: { kind, namespace, name } });
        if (count) await bumpCatalogVersion(tx);
        return count > 0;
      });
    },
    async patchStatus(conn, kind, namespace, name, status) {
      const row = await conn.resource.findUnique({ where: { kind_namespace_name: { kind, namespace, name } } });
      if (!row) return;
      await conn.resource.update({
        where: { kind_namespace_name: { kind, namespace, name } },
        data: { status: { ...(row.status as Record<string, unknown>), ...status } as never },
      });
    },
    async patchSpec(conn, kind, namespace, name, spec) {
      const row = await conn.resource.findUnique({ where: { kind_namespace_name: { kind, namespace, name } } });
      if (!row) return;
      await conn.resource.update({
        where: { kind_namespace_name: { kind, namespace, name } },
        data: { spec: { ...(row.spec as Record<string, unknown>), ...spec } as never, generation: row.generation + 1 },
      });
    },
  };
}

async function upsert(
  tx: Tx,
  kind: StoredKind,
  namespace: string,
  name: string,
  doc: { metadata: Record<string, unknown>; spec: Record<string, unknown> },
): Promise<AppliedItem['action']> {
  const metadata = { labels: doc.metadata.labels ?? undefined, annotations: doc.metadata.annotations ?? undefined };
  const existing = await tx.resource.findUnique({ where: { kind_namespace_name: { kind, namespace, name } } });
  if (!existing) {
    await tx.resource.create({ data: { kind, namespace, name, uid: randomUUID(), spec: doc.spec as never, metadata: metadata as never, status: {} } });
    return 'created';
  }
  if (canonical(existing.spec) === canonical(doc.spec) && canonical(existing.metadata) === canonical(metadata)) return 'unchanged';
  const specChanged = canonical(existing.spec) !== canonical(doc.spec);
  await tx.resource.update({
    where: { kind_namespace_name: { kind, namespace, name } },
    data: { spec: doc.spec as never, metadata: metadata as never, generation: existing.generation + (specChanged ? 1 : 0) },
  });
  return 'updated';
}

/** JSON with sorted keys, for change detection. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}
