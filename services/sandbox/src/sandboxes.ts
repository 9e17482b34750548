import { randomBytes } from 'node:crypto';
import { AppError } from '@sigil/kit/errors';
import { seal, unseal } from '@sigil/kit/crypto';
import type { Logger } from '@sigil/kit/log';
import { formatDuration, parseDuration, parseQuantity } from '@sigil/proto/units';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { components, operations } from '@sigil/proto/api/strata';
import { sandboxNameFor, type SandboxRestorePlan } from '@sigil/proto/internal-catalog';
import type { StrataJobs } from '@sigil/proto/strata-jobs';
import { sandboxTunnelPath } from '@sigil/proto/routes';
import type { CatalogClient } from './catalog-client.ts';
import type { Db, SandboxRow } from './db.ts';
import { recordAudit } from './audit.ts';
import { sandboxView } from './views.ts';
import { sandboxChanged, type TellConsole } from './console-events.ts';

export const PHASES = { pending: 'Pending', restoring: 'Restoring', ready: 'Ready', expired: 'Expired', failed: 'Failed', deleting: 'Deleting', deleted: 'Deleted' } as const;
/** Phases in which the sandbox still lives (and may be extended). */
export const LIVING = [PHASES.pending, PHASES.restoring, PHASES.ready];

const GIB = 1024 ** 3;

type SandboxCreateJob = StrataJobs['sandbox.create'];

/** What `POST /sandboxes` takes: a RestoreRequest whose mode, when given, is sandbox. */
export type SandboxRequest = operations['createSandbox']['requestBody']['content']['application/json'];

export interface SandboxDeps {
  db: Db;
  catalog: CatalogClient;
  secretsKey: Buffer;
  clock: () => Date;
  /** The consumer/subject cell of this deployment (tests); production has none. */
  cell: string;
  defaultTtl: string;
  maxTtl: string;
  /** Asks the reconciler for a pass (a sandbox to start, to delete). */
  kick: () => void;
  log: Logger;
  /** Tells open console pages a sandbox was created, extended or reset. */
  notify?: TellConsole;
}

export const passwordContext = (row: Pick<SandboxRow, 'namespace' | 'name'>) => `sandbox:${row.namespace}/${row.name}`;

export function createSandboxService(deps: SandboxDeps) {
  const { db } = deps;

  async function find(name: string): Promise<SandboxRow> {
    const row = await db.sandbox.findFirst({ where: { name, phase: { not: PHASES.deleted } } });
    if (!row) throw new AppError('not-found', `Sandbox ${name} was not found.`);
    return row;
  }

  /**
   * Fails a restore the catalog prepared for a sandbox that will not have it. No sandbox row holds it, so no later pass
   * can try again: a catalog that cannot be told is logged with both names, for an operator.
   */
  async function giveBack(restore: SandboxRestorePlan['restore'], sandbox: string, reason: string): Promise<void> {
    try {
      await deps.catalog.fail(restore.namespace, restore.name, reason);
      deps.log.warn({ sandbox, restore: restore.name, reason }, 'the sandbox restore was failed in the catalog');
    } catch (error) {
      deps.log.error({ sandbox, restore: restore.name, reason, err: error }, 'the catalog could not be told the sandbox restore failed; it stays Pending there');
    }
  }

  function durationOf(field: string, text: string): number {
    try {
      return parseDuration(text);
    } catch (error) {
      throw new AppError('validation-failed', `${field}: ${(error as Error).message}`);
    }
  }

  /** Records a new sandbox for a prepared restore; the reconciler starts its server. */
  async function insert(plan: SandboxRestorePlan, sandbox: { namespace: string; name: string }, asked: { owner: string; ttl?: string | undefined; expose?: boolean | undefined; deleteAfter?: boolean | undefined }) {
    const maxTtl = durationOf('policy sandbox.maxTTL', plan.policy.maxTTL ?? deps.maxTtl);
    const wanted = durationOf('ttl', asked.ttl ?? plan.policy.defaultTTL ?? deps.defaultTtl);
    const ttl = Math.min(wanted, maxTtl);
    const sizeLimit = plan.target.sandbox.sizeLimit ? parseQuantity(plan.target.sandbox.sizeLimit) : Math.max(2 * plan.backupBytes, GIB);
    const now = deps.clock();
    const password = randomBytes(18).toString('base64url');
    const row = await db.sandbox.create({
      data: {
        id: `sbx_${randomBytes(10).toString('hex')}`,
        ...sandbox, engine: plan.engine, phase: PHASES.pending, owner: asked.owner,
        message: ttl < wanted ? `waiting for a server; the ttl was capped at the policy's maxTTL ${formatDuration(maxTtl)}` : 'waiting for a server',
        targetNamespace: plan.target.namespace, targetName: plan.target.name, backupId: plan.backupID,
        restoreName: plan.restore.name, restoreId: plan.restore.id, dataTime: new Date(plan.time), major: plan.major,
        databases: plan.databases, database: plan.databases[0] ?? '', username: 'strata',
        sealedPassword: seal(deps.secretsKey, password, passwordContext(sandbox)),
        sizeLimitBytes: BigInt(sizeLimit), ttlSeconds: Math.round(ttl / 1000), maxTtlSeconds: Math.round(maxTtl / 1000),
        expiresAt: new Date(now.getTime() + ttl), expose: asked.expose === true, deleteAfter: asked.deleteAfter === true,
        masks: plan.target.mask, postRestoreSql: plan.target.sandbox.postRestoreSQL ?? [], source: plan.source ?? { backupID: plan.backupID }, createdAt: now,
      },
    });
    sandboxChanged(deps.notify, row, row.phase, row.message, now);
    deps.kick();
    return row;
  }

  return {
    find,
    async create(principal: StrataPrincipal, request: SandboxRequest) {
      // The contract leaves every RestoreRequest member optional (part 2.1); a sandbox cannot be made without its target.
      if (!request.target) throw new AppError('validation-failed', 'target: is required, as namespace/name');
      const [namespace, target] = request.target.includes('/') ? (request.target.split('/', 2) as [string, string]) : ['default', request.target];
      if (request.ttl) durationOf('ttl', request.ttl);
      const sandbox = { namespace, name: sandboxNameFor(target) };
      const owner = principal.email || principal.id;
      const plan = await deps.catalog.prepare(principal, {
        request: { target: `${namespace}/${target}`, ...pick(request, ['backupID', 'at', 'tables', 'ttl', 'expose', 'reason']) },
        sandbox,
        requestedBy: owner,
      });
      try {
        const row = await insert(plan, sandbox, { owner, ttl: request.ttl, expose: request.expose });
        return { message: `Sandbox ${row.name} of ${plan.target.namespace}/${plan.target.name} from backup ${plan.backupID} (${plan.time}) is starting; it expires at ${row.expiresAt.toISOString()}.`, kind: 'Sandbox', namespace, name: sandbox.name, link: `/sandboxes/${sandbox.name}` };
      } catch (error) {
        await giveBack(plan.restore, sandbox.name, `the sandbox could not be created: ${(error as Error).message}`);
        throw error;
      }
    },

    /** A sandbox the catalog prepared for `POST /restores` in mode sandbox (a `sandbox.create` job); a repeat is ignored. */
    async fromJob(job: SandboxCreateJob): Promise<void> {
      const exists = await db.sandbox.findUnique({ where: { namespace_name: job.sandbox } });
      if (exists) return;
      await insert(job.plan as unknown as SandboxRestorePlan, job.sandbox, job);
    },

    async list() {
      const rows = await db.sandbox.findMany({ where: { phase: { not: PHASES.deleted } }, orderBy: { createdAt: 'desc' }, take: 500 });
      return rows.map(sandboxView);
    },

    async get(name: string) {
      return sandboxView(await find(name));
    },

    async extend(name: string, body: components['schemas']['ExtendRequest'], principal: StrataPrincipal) {
      if (!body.by) throw new AppError('validation-failed', 'by: is required (a duration such as 2h)');
      const by = durationOf('by', body.by);
      if (by <= 0) throw new AppError('validation-failed', 'by: must be longer than zero');
      const extended = await db.$transaction(async (tx) => {
        const rows = await tx.$queryRawUnsafe<Array<{ id: string }>>(`SELECT id FROM sandboxes WHERE name = $1 AND phase <> 'Deleted' FOR UPDATE`, name);
        const row = rows[0] ? await tx.sandbox.findUnique({ where: { id: rows[0].id } }) : null;
        if (!row) throw new AppError('not-found', `Sandbox ${name} was not found.`);
        if (!LIVING.includes(row.phase as never)) throw new AppError('conflict', `Sandbox ${name} is ${row.phase}; only a living sandbox can be extended.`);
        const now = deps.clock();
        const ceiling = now.getTime() + row.maxTtlSeconds * 1000;
        const expires = Math.min(row.expiresAt.getTime() + by, ceiling);
        const granted = expires - row.expiresAt.getTime();
        // Less than a second more is nothing: the sandbox already expires as late as its policy allows.
        if (granted < 1000) throw new AppError('unprocessable', `Sandbox ${name} already expires at ${row.expiresAt.toISOString()}, the most its policy allows (maxTTL ${formatDuration(row.maxTtlSeconds * 1000)} from now).`);
        const extension = { by: body.by, granted: formatDuration(granted), reason: body.reason ?? '', user: principal.email || principal.id, at: now.toISOString() };
        await tx.sandbox.update({ where: { id: row.id }, data: { expiresAt: new Date(expires), extensions: [...(row.extensions as object[]), extension] } });
        const capped = granted < by ? ` (capped: the policy allows at most ${formatDuration(row.maxTtlSeconds * 1000)} from now)` : '';
        const message = `Sandbox ${name} now expires at ${new Date(expires).toISOString()}, ${formatDuration(granted)} later${capped}.`;
        return { row, message };
      });
      sandboxChanged(deps.notify, extended.row, extended.row.phase, extended.message, deps.clock());
      return { message: extended.message, kind: 'Sandbox', namespace: extended.row.namespace, name, link: `/sandboxes/${name}` };
    },

    /**
     * Bumps the reset generation: the reconciler recreates the server on an empty data directory and the same source is
     * restored into it again (a new Restore). Name, owner, credentials and expiry stay.
     */
    async reset(name: string, principal: StrataPrincipal, reason?: string) {
      const row = await find(name);
      if (row.phase !== PHASES.ready) throw new AppError('conflict', `Sandbox ${name} is ${row.phase}; only a Ready sandbox can be reset.`);
      const source = row.source as SandboxRestorePlan['source'];
      const plan = await deps.catalog.prepare(principal, {
        request: { target: `${row.targetNamespace}/${row.targetName}`, ...source, ...(reason ? { reason } : {}) },
        sandbox: { namespace: row.namespace, name: row.name },
        requestedBy: principal.email || principal.id,
      });
      const generation = row.resetGeneration + 1;
      const { count } = await db.sandbox
        .updateMany({
          where: { id: row.id, phase: PHASES.ready, resetGeneration: row.resetGeneration },
          data: {
            phase: PHASES.pending, message: `reset ${generation}: recreating the server empty, then restoring backup ${plan.backupID} again`,
            resetGeneration: generation, restoreName: plan.restore.name, restoreId: plan.restore.id, backupId: plan.backupID,
            dataTime: new Date(plan.time), databases: plan.databases, readyAt: null, usedBytes: 0n,
          },
        })
        .catch(async (error: unknown) => {
          await giveBack(plan.restore, name, `sandbox ${name} could not be reset: ${(error as Error).message}`);
          throw error;
        });
      if (count === 0) {
        await giveBack(plan.restore, name, `sandbox ${name} changed while it was being reset`);
        throw new AppError('conflict', `Sandbox ${name} changed while it was being reset (deleted, expired or reset by someone else); look at it again.`);
      }
      sandboxChanged(deps.notify, row, PHASES.pending, `reset ${generation}`, deps.clock());
      deps.kick();
      return { message: `Sandbox ${name} is being reset: its server is recreated empty and backup ${plan.backupID} (${plan.time}) restored into it again.`, kind: 'Sandbox', namespace: row.namespace, name, link: `/sandboxes/${name}` };
    },

    async credentials(name: string, principal: StrataPrincipal, from: string) {
      const row = await find(name);
      if (!row.port || ![PHASES.restoring, PHASES.ready].includes(row.phase as never)) {
        throw new AppError('conflict', `Sandbox ${name} is ${row.phase}; its credentials exist while it is Restoring or Ready.`);
      }
      await recordAudit(db, deps.cell, { time: deps.clock(), user: principal.email || principal.id, role: principal.role, action: 'getSandboxCredentials', target: `${row.targetNamespace}/${row.targetName}`, object: row.name, outcome: 'ok', from, detail: { status: 200 } });
      return { database: row.database, engine: row.engine, host: row.host, port: row.port, username: row.username, password: unseal(deps.secretsKey, row.sealedPassword, passwordContext(row)), route: row.expose ? sandboxTunnelPath(row.name) : '' };
    },

    async remove(name: string) {
      const row = await find(name);
      if (row.phase !== PHASES.deleting) await db.sandbox.update({ where: { id: row.id }, data: { phase: PHASES.deleting, message: 'stopping the server and wiping its data' } });
      deps.kick();
      return { message: `Sandbox ${name} is being deleted: its server stops and its data is wiped.`, kind: 'Sandbox', namespace: row.namespace, name, link: `/sandboxes/${name}` };
    },
  };
}

export type SandboxService = ReturnType<typeof createSandboxService>;

function pick<T extends object, K extends keyof T>(value: T, keys: K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter((k) => value[k] !== undefined).map((k) => [k, value[k]])) as Partial<Pick<T, K>>;
}
