import { AppError } from '@sigil/kit/errors';
import type { StrataPrincipal } from '@sigil/proto/strata';
import { sandboxNameFor, type PrepareSandboxRestore, type SandboxRestorePlan, type StartSandboxRestore } from '@sigil/proto/internal-catalog';
import type { StrataJobs } from '@sigil/proto/strata-jobs';
import type { BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import type { BackupDeps } from '../backups/backups.ts';
import { enqueueJob, newRunId } from '../backups/job-queue.ts';
import { bumpCatalogVersion, type Tx } from '../db.ts';
import { loadTargetBundle } from '../resources/stores.ts';
import { asksLatest, chooseBackup, databasesOf, momentToReplan, planRefOf, requestedChecks, restoreEvent, restoreJob, splitTarget, type RestoreRequest } from './restore-steps.ts';

type SandboxCreateJob = StrataJobs['sandbox.create'];

/** A verification restore: recorded on the backup when it finishes, its sandbox deleted after. */
export interface SandboxExtras {
  verify?: boolean;
  checks?: string[];
  deleteAfter?: boolean;
}
import type { TargetService } from '../console/targets.ts';

interface BackupManifest {
  mode?: string;
  consistentAt?: string;
  databases?: string[];
  objects?: Array<{ key: string; sha256: string; role: string; database?: string }>;
  server?: { major?: number; version?: string };
  stats?: { rawBytes?: number };
}

/**
 * Restores into sandboxes: the sandbox service prepares one (the backup and the plan are chosen, a Restore in phase
 * `Pending` names the sandbox), starts the sandbox's server, then starts the restore with the server's address and
 * admin credentials; the mover reports as for any restore.
 */
export function createSandboxRestores(deps: BackupDeps & { targets: TargetService }) {
  const { db, resources } = deps;

  async function pending(tx: Tx, namespace: string, name: string) {
    const row = await tx.restore.findUnique({ where: { namespace_name: { namespace, name } } });
    if (!row || row.mode !== 'sandbox') throw new AppError('not-found', `Sandbox restore ${namespace}/${name} was not found.`);
    if (row.phase !== 'Pending') throw new AppError('conflict', `Restore ${namespace}/${name} is ${row.phase}; only a pending sandbox restore can start.`);
    return row;
  }

  /** Chooses the backup (and the plan) and records the Pending Restore that names the sandbox. */
  async function prepareIn(tx: Tx, input: PrepareSandboxRestore, targetNamespace: string, targetName: string, extra: SandboxExtras = {}): Promise<SandboxRestorePlan> {
    const bundle = await loadTargetBundle(tx, resources, targetNamespace, targetName);
    const spec = bundle.target.spec as TargetSpec;
    if (spec.engine === 'mongodb') throw new AppError('not-restorable', 'Sandboxes of MongoDB targets are not available in this release.');
    const { backup, plan } = await chooseBackup(resources, tx, bundle, input.request);
    const manifest = (backup.manifest ?? {}) as BackupManifest;
    const id = newRunId(deps.clock());
    const name = `${input.sandbox.name}-restore-${id}`.slice(0, 253);
    const planRef = planRefOf(backup, plan);
    const at = momentToReplan(plan);
    const row = await tx.restore.create({
      data: {
        id, namespace: input.sandbox.namespace, name, targetNamespace, targetName, backupId: backup.id, mode: 'sandbox', phase: 'Pending',
        message: `waiting for sandbox ${input.sandbox.name} to start`, reason: input.request.reason ?? '', requestedBy: input.requestedBy,
        latest: asksLatest(input.request),
        destination: {
          mode: 'sandbox', sandbox: input.sandbox.name, backupID: backup.id, ...(at ? { at } : {}),
          ...(input.request.ttl ? { sandboxTTL: input.request.ttl } : {}), expose: input.request.expose === true,
          ...(extra.verify ? { verify: true } : {}), ...(extra.checks?.length ? { checks: extra.checks } : {}), ...(extra.deleteAfter ? { deleteAfter: true } : {}),
          ...(input.request.tables?.length ? { tables: input.request.tables } : {}),
        },
        ...(planRef ? { plan: planRef } : {}),
      },
    });
    deps.notify(restoreEvent(row, await bumpCatalogVersion(tx)));
    const wanted = spec.databases?.filter((d) => d !== '*') ?? [];
    const held = databasesOf(manifest);
    const databases = [...wanted.filter((d) => held.includes(d)), ...held.filter((d) => !wanted.includes(d))];
    const answer: SandboxRestorePlan = {
      restore: { namespace: row.namespace, name: row.name, id },
      backupID: backup.id,
      engine: spec.engine,
      major: manifest.server?.major || Number.parseInt(manifest.server?.version ?? '', 10) || 0,
      serverVersion: manifest.server?.version ?? '',
      databases,
      time: plan?.effectiveTime ?? manifest.consistentAt ?? (backup.completedAt ?? backup.queuedAt).toISOString(),
      backupBytes: Number(backup.rawBytes ?? 0),
      target: { namespace: targetNamespace, name: targetName, mask: spec.mask ?? [], sandbox: spec.sandbox ?? {}, labels: bundle.target.metadata.labels ?? {} },
      policy: { ...(bundle.policy.spec.sandbox ?? {}) },
      source: { ...(at ? { at } : { backupID: backup.id }), ...(input.request.tables?.length ? { tables: input.request.tables } : {}) },
      message: row.message,
    };
    return answer;
  }

  return {
    async prepare(principal: StrataPrincipal, input: PrepareSandboxRestore): Promise<SandboxRestorePlan> {
      const [targetNamespace, targetName] = splitTarget(input.request.target, input.sandbox.namespace);
      await deps.targets.visibleTarget(principal, targetNamespace, targetName);
      return await db.$transaction((tx) => prepareIn(tx, input, targetNamespace, targetName));
    },

    /**
     * `POST /restores` in mode `sandbox`: the restore is prepared here and the sandbox service is asked, through a
     * job sent with the same transaction, to create the sandbox it names.
     */
    async request(principal: StrataPrincipal, request: RestoreRequest, extra: SandboxExtras = {}) {
      const [namespace, targetName] = splitTarget(request.target);
      await deps.targets.visibleTarget(principal, namespace, targetName);
      const checks = extra.checks ?? requestedChecks(request, undefined);
      const sandbox = { namespace, name: sandboxNameFor(targetName) };
      const { ttl, expose } = request;
      const plan = await db.$transaction(async (tx) => {
        // The internal contract's request names its target, which splitTarget has checked.
        const prepared = await prepareIn(tx, { request: { ...request, target: `${namespace}/${targetName}` }, sandbox, requestedBy: principal.email || principal.id }, namespace, targetName, { ...extra, ...(checks ? { checks } : {}) });
        const job: SandboxCreateJob = {
          plan: prepared as never, sandbox, owner: principal.email || principal.id, orgs: principal.orgs, projects: principal.projects,
          ...(ttl ? { ttl } : {}), ...(expose ? { expose } : {}), ...(extra.deleteAfter ? { deleteAfter: true } : {}),
        };
        await enqueueJob(tx, deps.secretsKey, { id: `sandbox-${prepared.restore.id}`, type: 'sandbox.create', cell: deps.cell }, job);
        return prepared;
      });
      return { message: `Restore ${plan.restore.name} of ${namespace}/${targetName} from backup ${plan.backupID} into sandbox ${sandbox.name} started.`, kind: 'Restore', namespace: plan.restore.namespace, name: plan.restore.name, link: `/restores/${plan.restore.namespace}/${plan.restore.name}` };
    },

    async start(namespace: string, name: string, server: StartSandboxRestore): Promise<{ restoreId: string }> {
      return await db.$transaction(async (tx) => {
        const row = await pending(tx, namespace, name);
        const bundle = await loadTargetBundle(tx, resources, row.targetNamespace, row.targetName);
        const destination = row.destination as { at?: string; backupID: string };
        // The plan is chosen again for the moment recorded at prepare: the chain may only have grown since.
        const { backup, plan } = destination.at
          ? await chooseBackup(resources, tx, bundle, { at: destination.at })
          : await chooseBackup(resources, tx, bundle, { backupID: destination.backupID });
        const databases = databasesOf((backup.manifest ?? {}) as BackupManifest);
        const spec = bundle.target.spec as TargetSpec;
        const { checks, tables } = row.destination as { checks?: string[]; tables?: string[] };
        const job = await restoreJob(deps, tx, { bundle, backup, plan, id: row.id, namespace, name }, {
          destination: { engine: spec.engine, host: server.host, port: server.port, username: server.username, password: server.password, database: databases[0] ?? 'restored' },
          databases,
          keepNames: true,
          ...(checks ? { checks } : {}),
          ...(tables?.length ? { tables } : {}),
        });
        const updated = await tx.restore.update({
          where: { id: row.id },
          // `latest` chosen again may rest on a newer full, with more segments: the row says what is restored.
          data: { backupId: backup.id, ...(plan ? { plan: planRefOf(backup, plan) } : {}), phase: 'Running', message: `handed to a mover; restoring into sandbox ${(row.destination as { sandbox?: string }).sandbox ?? ''}`, startedAt: deps.clock(), destination: { ...(row.destination as object), host: `${server.host}:${server.port}`, databases } },
        });
        await enqueueJob(tx, deps.secretsKey, { id: `restore-${row.id}`, type: 'restore.run', cell: deps.cell }, job);
        deps.notify(restoreEvent(updated, await bumpCatalogVersion(tx)));
        return { restoreId: row.id };
      });
    },

    async fail(namespace: string, name: string, message: string): Promise<void> {
      await db.$transaction(async (tx) => {
        const row = await pending(tx, namespace, name);
        const updated = await tx.restore.update({ where: { id: row.id }, data: { phase: 'Failed', message, completedAt: deps.clock() } });
        deps.notify(restoreEvent(updated, await bumpCatalogVersion(tx)));
      });
    },
  };
}

export type SandboxRestores = ReturnType<typeof createSandboxRestores>;
