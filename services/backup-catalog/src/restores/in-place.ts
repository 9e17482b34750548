import type { BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import { DEFAULT_ENGINE_PORTS, type StrataPrincipal } from '@sigil/proto/strata';
import { BACKUP_PHASES, queueBackup, type BackupDeps, type BackupRow } from '../backups/backups.ts';
import { enqueueJob, newRunId } from '../backups/job-queue.ts';
import type { Tx } from '../db.ts';
import type { RestorePlan } from './plans.ts';
import { asksLatest, chooseBackup, databasesOf, momentToReplan, planRefOf, refuseTablesWithBinlogs, requestedChecks, restoreEvent, restoreJob, splitTarget, type RestoreRequest } from './restore-steps.ts';
import { loadTargetBundle, type TargetBundle } from '../resources/stores.ts';
import type { RestoreRow } from '../console/views.ts';

/** What an in-place restore remembers until it can start (after its safety backup). */
interface InPlaceDestination {
  mode: 'in-place';
  host: string;
  credentialsSecret: string;
  databases: string[];
  tables?: string[];
  checks?: string[];
  /** The moment or backup chosen when it was asked (the plan is built again when it starts). */
  at?: string;
  backupID: string;
  safetyBackup?: string;
  safetyBackupName?: string;
}

/**
 * In-place restores (role restorer-admin, `confirm` = the target's name): a safety backup of the target first (unless
 * `skipSafetyBackup`), then the target's databases are dropped and restored (or, with `tables`, those tables replaced)
 * with its admin credentials, and the checks run. A failed one says how to return to the safety backup.
 */
export function createInPlaceRestores(deps: BackupDeps) {
  const { resources } = deps;

  async function start(tx: Tx, row: RestoreRow, bundle: TargetBundle, chosen: { backup: BackupRow; plan?: RestorePlan }): Promise<RestoreRow> {
    const destination = row.destination as unknown as InPlaceDestination;
    const spec = bundle.target.spec as TargetSpec;
    const [secretNamespace, secretName] = splitTarget(destination.credentialsSecret, row.namespace);
    const username = await deps.secrets.resolve(tx, { namespace: secretNamespace, name: secretName, key: 'username' });
    const password = await deps.secrets.resolve(tx, { namespace: secretNamespace, name: secretName, key: 'password', optional: true });
    const job = await restoreJob(deps, tx, { ...chosen, bundle, id: row.id, namespace: row.namespace, name: row.name }, {
      destination: { engine: spec.engine, host: spec.endpoint.host, port: spec.endpoint.port ?? DEFAULT_ENGINE_PORTS[spec.engine], username: username ?? '', password: password ?? '', database: destination.databases[0] ?? '' },
      databases: destination.databases,
      keepNames: true,
      mode: 'in-place',
      ...(destination.tables ? { tables: destination.tables } : {}),
      ...(destination.checks ? { checks: destination.checks } : {}),
    });
    await enqueueJob(tx, deps.secretsKey, { id: `restore-${row.id}`, type: 'restore.run', cell: deps.cell }, job);
    // Chosen again after the safety backup, `latest` may rest on a newer full: the row says what is restored.
    const plan = planRefOf(chosen.backup, chosen.plan);
    return await tx.restore.update({ where: { id: row.id }, data: { backupId: chosen.backup.id, ...(plan ? { plan } : {}), phase: 'Running', message: `handed to a mover: ${destination.tables ? `tables ${destination.tables.join(', ')} of ` : ''}${destination.databases.join(', ')} restored in place`, startedAt: deps.clock() } });
  }

  return {
    async create(tx: Tx, principal: StrataPrincipal, request: RestoreRequest, named: { namespace: string; name?: string }): Promise<RestoreRow> {
      const [targetNamespace, targetName] = splitTarget(request.target, named.namespace);
      const bundle = await loadTargetBundle(tx, resources, targetNamespace, targetName);
      const spec = bundle.target.spec as TargetSpec;
      const chosen = await chooseBackup(resources, tx, bundle, request);
      const databases = databasesOf((chosen.backup.manifest ?? {}) as never).filter((d) => !spec.databases?.length || spec.databases.includes('*') || spec.databases.includes(d));
      refuseTablesWithBinlogs(spec, request.tables, chosen.plan?.choice?.segments.length ?? 0);
      const id = newRunId(deps.clock());
      const name = named.name ?? `${targetName}-restore-${id}`.slice(0, 253);
      const checks = requestedChecks({ ...request, runChecks: request.runChecks ?? true }, bundle.policy.spec.verify?.checks);
      const replanAt = momentToReplan(chosen.plan);
      const destination: InPlaceDestination = {
        mode: 'in-place',
        host: `${spec.endpoint.host}:${spec.endpoint.port ?? DEFAULT_ENGINE_PORTS[spec.engine]}`,
        credentialsSecret: request.credentialsSecret ?? `${targetNamespace}/${spec.credentials.secretRef.name}`,
        databases,
        backupID: chosen.backup.id,
        ...(replanAt ? { at: replanAt } : {}),
        ...(request.tables?.length ? { tables: request.tables } : {}),
        ...(checks ? { checks } : {}),
      };
      let safety: BackupRow | undefined;
      if (!request.skipSafetyBackup) {
        safety = (await tx.backup.findFirst({ where: { namespace: targetNamespace, targetName, phase: BACKUP_PHASES.queued } }))
          ?? (await queueBackup(tx, bundle, { reason: `safety backup before the in-place restore ${name}`, requestedBy: principal.email || principal.id }, deps.clock()));
        destination.safetyBackup = safety.id;
        destination.safetyBackupName = safety.name;
      }
      const planRef = planRefOf(chosen.backup, chosen.plan);
      const row = await tx.restore.create({
        data: {
          id, namespace: named.namespace, name, targetNamespace, targetName, backupId: chosen.backup.id, mode: 'in-place', reason: request.reason ?? '', requestedBy: principal.email || principal.id,
          latest: asksLatest(request),
          phase: safety ? 'Pending' : 'Running',
          message: safety ? `waiting for the safety backup ${safety.name}` : 'no safety backup (skipSafetyBackup)',
          destination: destination as never,
          ...(planRef ? { plan: planRef } : {}),
        },
      });
      return safety ? row : await start(tx, row, bundle, chosen);
    },

    /** A safety backup finished: the in-place restores waiting for it start, or fail without having changed anything. */
    async afterSafetyBackup(tx: Tx, backup: BackupRow): Promise<void> {
      const waiting = await tx.restore.findMany({ where: { mode: 'in-place', phase: 'Pending', targetNamespace: backup.namespace, targetName: backup.targetName } });
      for (const row of waiting.filter((r) => (r.destination as unknown as InPlaceDestination).safetyBackup === backup.id)) {
        let updated: RestoreRow;
        if (backup.phase !== BACKUP_PHASES.succeeded) {
          updated = await tx.restore.update({ where: { id: row.id }, data: { phase: 'Failed', message: `the safety backup ${backup.name} failed (${backup.message}); nothing was restored and the databases are unchanged`, completedAt: deps.clock() } });
        } else {
          try {
            const bundle = await loadTargetBundle(tx, resources, row.targetNamespace, row.targetName);
            const destination = row.destination as unknown as InPlaceDestination;
            const chosen = await chooseBackup(resources, tx, bundle, destination.at ? { at: destination.at } : { backupID: destination.backupID });
            updated = await start(tx, row, bundle, chosen);
          } catch (error) {
            updated = await tx.restore.update({ where: { id: row.id }, data: { phase: 'Failed', message: `the restore could not start after its safety backup ${backup.name}: ${(error as Error).message}; the databases are unchanged`, completedAt: deps.clock() } });
          }
        }
        deps.notify(restoreEvent(updated, 0n));
      }
    },
  };
}

export type InPlaceRestores = ReturnType<typeof createInPlaceRestores>;

/** What a failed in-place restore adds to its message: the way back. */
export function wayBack(row: RestoreRow): string {
  if (row.mode !== 'in-place') return '';
  const destination = row.destination as unknown as InPlaceDestination;
  const target = `${row.targetNamespace}/${row.targetName}`;
  if (!destination.safetyBackup) return ' The databases may be partly restored, and no safety backup was taken (skipSafetyBackup).';
  return ` The databases may be partly restored; to return to the state before this restore, restore the safety backup: strata restore ${target} --mode in-place --backup ${destination.safetyBackup} --confirm ${row.targetName} --skip-safety-backup`;
}
