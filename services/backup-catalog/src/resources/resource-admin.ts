import { AppError } from '@sigil/kit/errors';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { BACKUP_PHASES } from '../backups/backups.ts';
import type { Db, Tx } from '../db.ts';
import type { ConsoleEvent } from '../console/events.ts';
import { STORED_KINDS, type AppliedItem, type ResourceRepository, type StoredKind, type StoredResource } from './resources.ts';
import type { BackupTargetSpec as TargetSpec, TargetPitrStatus } from '@sigil/proto/resources';
import { releaseTargetSlots, slotName } from '../change-capture/replication.ts';
import { findPolicy } from './stores.ts';
import type { RestoreService } from '../restores/restores.ts';
import { backupDocument, restoreDocument } from './run-documents.ts';
import type { SecretStore } from './secrets.ts';
import type { StatusWriter } from './status.ts';
import type { TargetService } from '../console/targets.ts';

export interface ResourceAdminDeps {
  db: Db;
  resources: ResourceRepository;
  secrets: SecretStore;
  targets: TargetService;
  restores: RestoreService;
  status: StatusWriter;
  notify: (event: ConsoleEvent) => void;
  kick: () => void;
  /** Checks a store (creating its bucket when writable) and mirrors its backups. */
  mirrorStore: (namespace: string, name: string) => Promise<number>;
}

/** Declarative resources and secrets: apply, read, delete. */
export function createResourceAdmin(deps: ResourceAdminDeps) {
  const { db, resources, secrets } = deps;
  const releaseTargetSlot = (target: StoredResource<TargetSpec>) => releaseTargetSlotWith(db, secrets, target);

  /** A Backup document queues a run once; one naming a backupID refers to a mirrored backup. */
  async function applyBackup(tx: Tx, doc: { namespace: string; name: string; spec: Record<string, unknown> }, who: StrataPrincipal): Promise<AppliedItem['action']> {
    if (typeof doc.spec.backupID === 'string' && doc.spec.backupID) {
      const known = await tx.backup.findUnique({ where: { id: doc.spec.backupID } });
      if (!known) throw new AppError('unprocessable', `spec.backupID: ${doc.spec.backupID} is not in any store the catalog has mirrored.`);
      return 'unchanged';
    }
    if (await tx.backup.findUnique({ where: { namespace_name: { namespace: doc.namespace, name: doc.name } } })) return 'unchanged';
    await deps.targets.queueFromResource(tx, doc.namespace, doc.name, doc.spec, who);
    return 'created';
  }

  return {
    async apply(body: unknown, principal: StrataPrincipal) {
      const result = await resources.apply(body, principal, {
        backup: applyBackup,
        restore: (tx, doc, who) => deps.restores.fromResource(tx, doc.namespace, doc.name, doc.spec, who),
      });
      for (const item of result.items) {
        if (item.kind === 'BackupStore' && item.action !== 'unchanged') await deps.mirrorStore(item.namespace, item.name);
      }
      // After the transaction: a missing reference is a warning, never a refusal (its document may come later).
      const warnings = await deps.status.warningsFor(result.items);
      await deps.status.afterChange(result.items);
      if (result.version > 0n) {
        deps.notify({ kind: 'catalog', namespace: '', name: '', phase: '', stage: '', message: 'resources applied', bytes: 0, version: Number(result.version) });
        deps.kick();
      }
      const changed = result.items.filter((i) => i.action !== 'unchanged').length;
      const warned = warnings.length ? ` ${warnings.length} warning(s): ${warnings.map((w) => `${w.kind} ${w.namespace}/${w.name}: ${w.path}: ${w.message}`).join('; ')}.` : '';
      return { applied: result.items, message: `${result.items.length} resource(s) applied, ${changed} changed.${warned}`, warnings };
    },
    /** Stores, policies and targets; Backup and Restore runs as documents when that kind is asked for. */
    async list(kind: string | undefined) {
      if (kind === 'Backup') return (await newestBackupsPerTarget(db, resources)).map(backupDocument);
      if (kind === 'Restore') return (await db.restore.findMany({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] })).map(restoreDocument);
      if (kind && !STORED_KINDS.includes(kind as StoredKind)) throw new AppError('validation-failed', `kind: must be one of ${[...STORED_KINDS, 'Backup', 'Restore'].join(', ')}`);
      return resources.list(db, kind as StoredKind | undefined);
    },
    async get(kindName: string, namespace: string, name: string) {
      const where = { namespace_name: { namespace, name } };
      const kind = kindName.toLowerCase();
      const found =
        kind === 'backup'
          ? await db.backup.findUnique({ where }).then((row) => row && backupDocument(row))
          : kind === 'restore'
            ? await db.restore.findUnique({ where }).then((row) => row && restoreDocument(row))
            : await resources.get(db, storedKind(kindName), namespace, name);
      if (!found) throw new AppError('not-found', `${kindName} ${namespace}/${name} was not found.`);
      return found;
    },
    async remove(kindName: string, namespace: string, name: string) {
      const kind = storedKind(kindName);
      const busy = kind === 'BackupTarget' && (await db.backup.count({ where: { namespace, targetName: name, phase: { in: [BACKUP_PHASES.queued, BACKUP_PHASES.running] } } }));
      if (busy) throw new AppError('conflict', `Target ${namespace}/${name} has a backup in progress; wait for it to finish.`);
      const target = kind === 'BackupTarget' ? await resources.get<TargetSpec>(db, 'BackupTarget', namespace, name) : undefined;
      if (!(await resources.remove(kind, namespace, name))) throw new AppError('not-found', `${kind} ${namespace}/${name} was not found.`);
      await deps.status.afterChange([{ kind, namespace, name }]);
      const released = target ? await releaseTargetSlot(target) : '';
      return { message: `${kind} ${namespace}/${name} deleted. Its backups stay in the store.${released}`, kind, namespace, name };
    },
    listSecrets: () => secrets.list(db),
    async putSecret(namespace: string, name: string, data: Record<string, string>) {
      const action = await secrets.put(db, namespace, name, data);
      if (action !== 'unchanged') await deps.status.afterChange([{ kind: 'Secret', namespace, name }]);
      return { message: `Secret ${namespace}/${name} ${action}.`, kind: 'Secret', namespace, name };
    },
    async removeSecret(namespace: string, name: string) {
      if (!(await secrets.remove(db, namespace, name))) throw new AppError('not-found', `Secret ${namespace}/${name} was not found.`);
      await deps.status.afterChange([{ kind: 'Secret', namespace, name }]);
      return { message: `Secret ${namespace}/${name} deleted.`, kind: 'Secret', namespace, name };
    },
  };
}

export type ResourceAdmin = ReturnType<typeof createResourceAdmin>;

/**
 * A deleted Postgres target releases its replication slots (the physical one and its previews' logical ones): those
 * not in use now, and its streamer drops the rest as it stops at its next report.
 */
async function releaseTargetSlotWith(db: Db, secrets: SecretStore, target: StoredResource<TargetSpec>): Promise<string> {
  if (target.spec.engine !== 'postgres') return '';
  const pitr = (target.status as { pitr?: TargetPitrStatus }).pitr;
  const streamed = Boolean(pitr?.streamId || pitr?.streamPreviews !== undefined || pitr?.segments);
  const slot = slotName(target.metadata.uid);
  try {
    const dropped = await releaseTargetSlots(db, secrets, target, 'all');
    if (dropped.length) return ` Replication slot${dropped.length > 1 ? 's' : ''} ${dropped.join(', ')} ${dropped.length > 1 ? 'were' : 'was'} released.`;
    return pitr?.streamId ? ` Its streamer releases replication slot ${slot} as it stops.` : '';
  } catch (error) {
    return streamed ? ` Replication slot ${slot} could not be released (${(error as Error).message}); drop it on the server: SELECT pg_drop_replication_slot('${slot}');` : '';
  }
}

function storedKind(kind: string): StoredKind {
  const match = STORED_KINDS.find((k) => k.toLowerCase() === kind.toLowerCase());
  if (!match) throw new AppError('not-found', `Unknown kind ${kind}; kinds are ${STORED_KINDS.join(', ')}.`);
  return match;
}

/** The spec's default of a policy's `keepBackupObjects`. */
const KEEP_BACKUP_OBJECTS = 20;

/**
 * The Backup documents of the declarative view: per target, the newest `keepBackupObjects` of its policy (default 20),
 * newest first. The catalog and the store keep every backup regardless; the console API's lists show them all.
 */
async function newestBackupsPerTarget(db: Db, resources: ResourceRepository) {
  const rows = await db.backup.findMany({ orderBy: [{ queuedAt: 'desc' }, { id: 'desc' }] });
  const keep = new Map<string, number>();
  for (const target of await resources.list<TargetSpec>(db, 'BackupTarget')) {
    const policy = await findPolicy(db, resources, target.metadata.namespace, target.spec.policy);
    keep.set(`${target.metadata.namespace}/${target.metadata.name}`, policy?.spec.keepBackupObjects ?? KEEP_BACKUP_OBJECTS);
  }
  const shown = new Map<string, number>();
  return rows.filter((row) => {
    const target = `${row.namespace}/${row.targetName}`;
    const count = (shown.get(target) ?? 0) + 1;
    shown.set(target, count);
    return count <= (keep.get(target) ?? KEEP_BACKUP_OBJECTS);
  });
}
