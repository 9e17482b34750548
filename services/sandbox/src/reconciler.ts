import { AppError } from '@sigil/kit/errors';
import { unseal } from '@sigil/kit/crypto';
import type { ExclusiveWork } from '@sigil/kit/db';
import type { Logger } from '@sigil/kit/log';
import type { CatalogClient } from './catalog-client.ts';
import type { Db, SandboxRow } from './db.ts';
import { formatQuantity } from './quantity.ts';
import type { RuntimeState, SandboxRuntime, ServerSpec } from './runtime/types.ts';
import { LIVING, PHASES, passwordContext } from './sandboxes.ts';
import { sandboxChanged, type TellConsole } from './console-events.ts';

export interface ReconcilerDeps {
  db: Db;
  runtime: SandboxRuntime;
  catalog: CatalogClient;
  secretsKey: Buffer;
  clock: () => Date;
  log: Logger;
  /** Tells the console a sandbox's phase changed (`strataConsoleSubject`): open pages read again, e.g. drop a deleted one. */
  notify?: TellConsole;
  /** Across replicas, one pass at a time works on a sandbox (two would start two servers on its data). */
  exclusive?: ExclusiveWork;
}

/**
 * Brings every sandbox to what its record says: starts the server of a new one and hands its restore to a mover,
 * restarts a server that stopped (after a restart of this service or of the machine), stops and wipes a sandbox that
 * expired, outgrew its size limit or was deleted. Everything it acts on is in the database, so a restarted service
 * carries on where the last one stopped: an expiry that fell due while it was down is carried out on its first pass.
 */
export function createReconciler(deps: ReconcilerDeps) {
  const { db, runtime, log } = deps;
  const changed = (row: SandboxRow, phase: string, message: string) => sandboxChanged(deps.notify, row, phase, message, deps.clock());
  /** Sandboxes a pass is working on: a slow start (MariaDB's install takes seconds) never runs twice. */
  const busy = new Set<string>();

  const specOf = (row: SandboxRow): ServerSpec => ({
    id: row.id,
    engine: row.engine as ServerSpec['engine'],
    major: row.major,
    username: row.username,
    password: unseal(deps.secretsKey, row.sealedPassword, passwordContext(row)),
    sizeLimitBytes: Number(row.sizeLimitBytes),
  });
  const stateOf = (row: SandboxRow): RuntimeState | undefined => ((row.runtime as { dir?: string }).dir ? (row.runtime as unknown as RuntimeState) : undefined);

  /**
   * Tells the catalog the sandbox's restore will not run; whether it knows now. A restore that started or ended (409)
   * or is gone (404) needs nothing; a catalog that cannot be reached or fails is asked again on the next pass.
   */
  async function giveBackRestore(row: SandboxRow, reason: string): Promise<boolean> {
    try {
      await deps.catalog.fail(row.namespace, row.restoreName, reason);
      log.warn({ sandbox: row.name, restore: row.restoreName, reason }, 'the sandbox restore was failed in the catalog');
      return true;
    } catch (error) {
      if (error instanceof AppError && (error.status === 409 || error.status === 404)) return true;
      log.warn({ sandbox: row.name, restore: row.restoreName, err: error }, 'the catalog could not be told the sandbox restore failed; the next pass tries again');
      return false;
    }
  }

  /**
   * The phase is recorded first (a restore failing because its server stopped must not say otherwise), then the wipe;
   * the sandbox has ended once the catalog knows its restore will not run (until then each pass tries again).
   */
  async function end(row: SandboxRow, phase: string, message: string): Promise<void> {
    await db.sandbox.update({ where: { id: row.id }, data: { phase, message } });
    changed(row, phase, message);
    const state = stateOf(row);
    if (state) await runtime.wipe(state);
    if (!(await giveBackRestore(row, restoreEndedBecause(row, phase, message)))) return;
    await db.sandbox.update({ where: { id: row.id }, data: { endedAt: deps.clock() } });
    log.info({ sandbox: row.name, phase }, message);
  }

  async function provision(row: SandboxRow): Promise<void> {
    let state = stateOf(row);
    try {
      state = await runtime.start(specOf(row), state);
      await db.sandbox.update({ where: { id: row.id }, data: { runtime: state as never, host: state.host, port: state.port, message: 'server started; handing the restore to a mover' } });
      try {
        await deps.catalog.start(row.namespace, row.restoreName, { host: state.host, port: state.port, username: row.username, password: specOf(row).password });
      } catch (error) {
        // Started by a pass that stopped before it could record it: the mover has it already.
        if (!(error instanceof AppError && error.status === 409)) throw error;
      }
      const restoring = await db.sandbox.updateMany({ where: { id: row.id, phase: PHASES.pending }, data: { phase: PHASES.restoring, message: `restoring backup ${row.backupId}` } });
      if (restoring.count) changed(row, PHASES.restoring, `restoring backup ${row.backupId}`);
    } catch (error) {
      const message = `the sandbox could not start: ${(error as Error).message}`;
      if (error instanceof AppError && error.status === 503) {
        log.warn({ sandbox: row.name, restore: row.restoreName, err: error }, 'the catalog did not answer; the next pass tries again');
        return;
      }
      log.error({ sandbox: row.name, restore: row.restoreName, err: error }, 'the sandbox could not start; its restore is failed');
      await end({ ...row, runtime: (state ?? row.runtime) as never }, PHASES.failed, message);
    }
  }

  /** A reset: the old server and its data go first; a pass interrupted here wipes again (nothing is left to lose). */
  async function recreate(row: SandboxRow): Promise<SandboxRow> {
    const state = stateOf(row);
    if (state) await runtime.wipe(state);
    log.info({ sandbox: row.name, generation: row.resetGeneration }, 'sandbox reset: the old server and its data are gone');
    return await db.sandbox.update({ where: { id: row.id }, data: { runtime: {}, port: null, host: '', observedReset: row.resetGeneration } });
  }

  async function watch(row: SandboxRow): Promise<void> {
    const state = stateOf(row);
    if (!state) return;
    if (!(await runtime.alive(state))) {
      log.info({ sandbox: row.name }, 'the sandbox server is not running; starting it again on its data');
      const started = await runtime.start(specOf(row), state);
      await db.sandbox.update({ where: { id: row.id }, data: { runtime: started as never, host: started.host, port: started.port } });
    }
    const used = await runtime.usedBytes(state);
    if (used > Number(row.sizeLimitBytes)) {
      await end(row, PHASES.failed, `the sandbox uses ${formatQuantity(used)}, over its size limit of ${formatQuantity(Number(row.sizeLimitBytes))}; its server was stopped and its data wiped`);
      return;
    }
    if (BigInt(used) !== row.usedBytes) await db.sandbox.update({ where: { id: row.id }, data: { usedBytes: BigInt(used) } });
  }

  async function reconcile(row: SandboxRow): Promise<void> {
    const now = deps.clock();
    if (row.phase === PHASES.deleting) return await end(row, PHASES.deleted, 'deleted');
    // Failed elsewhere (a restore report) with its server still there: nothing in it is worth keeping. Or ended by a pass
    // that could not tell the catalog its restore will not run.
    if (ENDED.includes(row.phase)) return await end(row, row.phase, row.message);
    if (LIVING.includes(row.phase as never) && row.expiresAt <= now) {
      return await end(row, PHASES.expired, `expired at ${row.expiresAt.toISOString()}; its server was stopped and its data wiped`);
    }
    if (row.phase === PHASES.pending && row.resetGeneration > row.observedReset) return await provision(await recreate(row));
    if (row.phase === PHASES.pending) return await provision(row);
    if (row.phase === PHASES.restoring || row.phase === PHASES.ready) return await watch(row);
  }

  return {
    /** One pass over every sandbox that needs something; each sandbox is handled on its own. */
    async pass(): Promise<void> {
      const rows = await db.sandbox.findMany({ where: { OR: [{ phase: { in: [...LIVING, PHASES.deleting] } }, { phase: { in: ENDED }, endedAt: null }] } });
      await Promise.all(
        rows
          .filter((row) => !busy.has(row.id))
          .map(async (row) => {
            busy.add(row.id);
            try {
              if (!deps.exclusive) return await reconcile(row);
              // Read again under the lock: another replica may have moved the sandbox on since the list was read.
              await deps.exclusive.tryExclusive(`strata-sandbox:${row.id}`, async () => {
                const current = await db.sandbox.findUnique({ where: { id: row.id } });
                if (current && !current.endedAt) await reconcile(current);
              });
            } catch (error) {
              log.error({ err: error, sandbox: row.name, restore: row.restoreName }, 'sandbox reconcile failed');
            } finally {
              busy.delete(row.id);
            }
          }),
      );
    },
    /** Waits for the work a pass started (tests, shutdown). */
    get busy(): number {
      return busy.size;
    },
  };
}

export type Reconciler = ReturnType<typeof createReconciler>;

/** Phases of a sandbox that is over; one whose `endedAt` is unset still has its restore to give back, or its server to wipe. */
const ENDED: string[] = [PHASES.failed, PHASES.expired, PHASES.deleted];

/** Why a sandbox's restore will not run, as the catalog records it (only a restore that never started takes it). */
function restoreEndedBecause(row: SandboxRow, phase: string, message: string): string {
  if (phase === PHASES.expired) return 'the sandbox expired before it started';
  if (phase === PHASES.deleted) return `sandbox ${row.name} was deleted before its restore started`;
  return message;
}
