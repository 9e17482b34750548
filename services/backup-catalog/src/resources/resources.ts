import { randomUUID } from 'node:crypto';
import { AppError } from '@sigil/kit/errors';
import { STRATA, type StrataPrincipal } from '@sigil/proto/strata';
import { validateResource } from '@sigil/proto/resources';
import { bumpCatalogVersion, type Db, type DbOrTx, type Tx } from '../db.ts';
import type { SecretStore } from './secrets.ts';
import { applyFailure, documentRef, problem, type ApplyProblem, type DocumentRef } from './apply-problems.ts';

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

/** Validates every document before anything is written: any problem fails the whole apply, and all are reported. */
export function validateDocuments(docs: unknown[]): Validated[] {
  const seen = new Set<string>();
  const problems: ApplyProblem[] = [];
  const items: Validated[] = [];
  docs.forEach((doc, index) => {
    const ref = documentRef(doc, index);
    const result = validateOne(doc, ref);
    if (Array.isArray(result)) {
      problems.push(...result);
      return;
    }
    const key = `${result.kind}/${result.namespace}/${result.name}`;
    if (seen.has(key)) problems.push(problem(ref, '', 'appears twice in this apply'));
    seen.add(key);
    items.push(result);
  });
  if (problems.length) throw applyFailure(problems);
  return items;
}

function validateOne(doc: unknown, ref: DocumentRef): Validated | ApplyProblem[] {
  const d = doc as { apiVersion?: unknown; kind?: unknown };
  if (d?.kind === 'Secret' && d.apiVersion === 'v1') return validateSecret(doc as Record<string, unknown>, ref);
  const result = validateResource(doc);
  if (!result.ok) return result.errors.map((e) => problem(ref, e.path, e.message));
  const resource = result.resource as unknown as { kind: string; metadata: Record<string, unknown> & { name: string; namespace: string }; spec: Record<string, unknown> };
  const { kind, metadata } = resource;
  if (kind === 'Sandbox') {
    return [problem(ref, '', 'Sandbox documents are not applied in this release; create a sandbox with POST /api/v1/sandboxes (strata sandbox create)', 'unprocessable')];
  }
  return { kind: kind as StoredKind | 'Backup' | 'Restore', namespace: metadata.namespace, name: metadata.name, doc: { metadata, spec: resource.spec } } as Validated;
}

const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const KEY = /^[-._a-zA-Z0-9]+$/;

function validateSecret(doc: Record<string, unknown>, ref: DocumentRef): Validated | ApplyProblem[] {
  const problems: ApplyProblem[] = [];
  const metadata = (doc.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  if (!NAME.test(name)) problems.push(problem(ref, 'metadata.name', 'must be a lowercase DNS name'));
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : 'default';
  if (!NAME.test(namespace)) problems.push(problem(ref, 'metadata.namespace', 'must be a lowercase DNS name'));
  const data: Record<string, string> = {};
  for (const [field, decode] of [['data', true], ['stringData', false]] as const) {
    const map = doc[field];
    if (map === undefined) continue;
    if (!map || typeof map !== 'object' || Array.isArray(map)) {
      problems.push(problem(ref, field, 'must be a map of strings'));
      continue;
    }
    for (const [key, value] of Object.entries(map)) {
      if (!KEY.test(key)) problems.push(problem(ref, `${field}.${key}`, 'is not a valid key'));
      else if (typeof value !== 'string') problems.push(problem(ref, `${field}.${key}`, 'must be a string'));
      else if (decode && !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) problems.push(problem(ref, `data.${key}`, 'must be base64'));
      else data[key] = decode ? Buffer.from(value, 'base64').toString('utf8') : value;
    }
  }
  if (Object.keys(data).length === 0 && problems.length === 0) problems.push(problem(ref, 'data', 'a secret needs at least one key'));
  if (problems.length) return problems;
  return { kind: 'Secret', namespace, name, secret: { namespace, name, data } };
}

export type StatusUpdate = (resource: StoredResource, tx: Tx) => Record<string, unknown> | Promise<Record<string, unknown>>;

export interface ResourceRepository {
  apply(body: unknown, principal: StrataPrincipal, runs: RunRequests): Promise<{ items: AppliedItem[]; version: bigint }>;
  get<Spec = Record<string, unknown>>(db: DbOrTx, kind: StoredKind, namespace: string, name: string): Promise<StoredResource<Spec> | undefined>;
  list<Spec = Record<string, unknown>>(db: DbOrTx, kind?: StoredKind): Promise<Array<StoredResource<Spec>>>;
  remove(kind: StoredKind, namespace: string, name: string): Promise<boolean>;
  patchStatus(db: DbOrTx, kind: StoredKind, namespace: string, name: string, status: Record<string, unknown>): Promise<void>;
  /**
   * Rewrites a resource's status under a row lock (in the caller's transaction, or one of its own), so writers of
   * different fields and conditions never lose each other's changes. Undefined when the resource does not exist.
   */
  updateStatus(conn: DbOrTx, kind: StoredKind, namespace: string, name: string, update: StatusUpdate): Promise<{ before: Record<string, unknown>; after: Record<string, unknown> } | undefined>;
  patchSpec(db: DbOrTx, kind: StoredKind, namespace: string, name: string, spec: Record<string, unknown>): Promise<void>;
  /**
   * Takes the resource's row lock in the caller's transaction; false when it does not exist. Writers lock a target's
   * row before the catalog version's (`bumpCatalogVersion`), so two of them never wait on each other in a circle.
   */
  lock(tx: Tx, kind: StoredKind, namespace: string, name: string): Promise<boolean>;
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
  const lock: ResourceRepository['lock'] = async (tx, kind, namespace, name) => {
    const locked = await tx.$queryRawUnsafe<unknown[]>('SELECT 1 FROM resources WHERE kind = $1 AND namespace = $2 AND name = $3 FOR UPDATE', kind, namespace, name);
    return locked.length > 0;
  };
  const updateStatus: ResourceRepository['updateStatus'] = async (conn, kind, namespace, name, update) => {
    const run = async (tx: Tx) => {
      const row = (await lock(tx, kind, namespace, name)) ? await tx.resource.findUnique({ where: { kind_namespace_name: { kind, namespace, name } } }) : null;
      if (!row) return undefined;
      const resource = toStored<Record<string, unknown>>(row);
      const after = await update(resource, tx);
      if (canonical(after) !== canonical(resource.status)) {
        await tx.resource.update({ where: { kind_namespace_name: { kind, namespace, name } }, data: { status: after as never } });
      }
      return { before: resource.status, after };
    };
    return '$transaction' in conn ? conn.$transaction(run) : run(conn);
  };

  return {
    async apply(body, principal, runs) {
      const items = validateDocuments(parseDocuments(body));
      return db.$transaction(async (tx) => {
        const applied: AppliedItem[] = [];
        const problems: ApplyProblem[] = [];
        for (const [index, item] of items.entries()) {
          const { kind, namespace, name } = item;
          let action: AppliedItem['action'];
          try {
            if (item.kind === 'Secret') action = await secrets.put(tx, namespace, name, item.secret.data);
            else if (item.kind === 'Backup') action = await runs.backup(tx, { namespace, name, spec: item.doc.spec }, principal);
            else if (item.kind === 'Restore') action = await runs.restore(tx, { namespace, name, spec: item.doc.spec }, principal);
            else action = await upsert(tx, item.kind, namespace, name, item.doc);
          } catch (error) {
            // A refused Backup or Restore writes nothing, so the others are still tried and every refusal reported.
            if (!(error instanceof AppError)) throw error;
            problems.push(problem({ document: index + 1, kind, namespace, name }, '', error.message, error.code));
            continue;
          }
          applied.push({ kind, namespace, name, action });
        }
        if (problems.length) throw applyFailure(problems);
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
      await updateStatus(conn, kind, namespace, name, (resource) => ({ ...resource.status, ...status }));
    },
    updateStatus,
    lock,
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
