import { randomInt } from 'node:crypto';
import type { Logger } from '@sigil/kit/log';
import type { BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import type { StrataPrincipal } from '@sigil/proto/strata';
import type { StrataReports } from '@sigil/proto/strata-jobs';
import type { BackupDeps } from '../backups/backups.ts';
import type { ChainReport } from '../change-capture/chain.ts';
import { chainSummary } from '../change-capture/chain-inputs.ts';
import type { Tx } from '../db.ts';
import { DEFAULT_VERIFY_CHECKS } from './restore-checks.ts';
import type { SandboxRestores } from './sandbox-restores.ts';
import { decide, verifyScheduleFor } from '../scheduling/schedule.ts';
import { findPolicy } from '../resources/stores.ts';
import { backupRefView, type RestoreRow } from '../console/views.ts';

/** Who starts verification restores (recorded as the Restore's requester and in the audit of the sandbox). */
const VERIFIER: StrataPrincipal = { id: 'verifier', email: 'verifier', role: 'restorer', groups: [], orgs: [], projects: [], service: true };
/** A verification sandbox lives at most this long; it is deleted as soon as its checks are in. */
const VERIFY_TTL = '6h';

type CheckResult = NonNullable<StrataReports['restore.succeeded']['checks']>[number];
type ChainTarget = Parameters<typeof chainSummary>[1];

/**
 * Scheduled verification restores: on the policy's `verify.schedule` each target's latest backup (or, with
 * `randomPointInTime` and change capture, a random moment of its window) is restored into a throwaway sandbox, the
 * mover runs the checks on it, and the outcome is written to the backup and the target.
 */
export function createVerifier(deps: BackupDeps & { sandboxRestores: SandboxRestores; log: Logger }) {
  const { db, resources } = deps;

  /** The verifications that fell due, their slots recorded; the moment each restores is chosen after, outside the lock's transaction. */
  async function due(now: Date): Promise<Array<{ target: ChainTarget; namespace: string; name: string; random: boolean; checks: string[] }>> {
    return await db.$transaction(async (tx) => {
      const locked = await tx.$queryRawUnsafe<Array<{ ok: boolean }>>(`SELECT pg_try_advisory_xact_lock(hashtext('strata-verifier')) AS ok`);
      if (!locked[0]?.ok) return [];
      const runs = [];
      for (const target of await resources.list<TargetSpec>(tx, 'BackupTarget')) {
        const { namespace, name } = target.metadata;
        const policy = await findPolicy(tx, resources, namespace, target.spec.policy);
        const schedule = policy ? verifyScheduleFor(policy.spec, target.metadata.uid) : undefined;
        if (!policy || !schedule) continue;
        const status = target.status as { lastVerifyScheduleTime?: string };
        const decision = decide(schedule, new Date(status.lastVerifyScheduleTime ?? target.metadata.creationTimestamp), now);
        if (!decision.due) continue;
        await resources.patchStatus(tx, 'BackupTarget', namespace, name, { lastVerifyScheduleTime: decision.slot.toISOString() });
        if (!decision.run || target.spec.suspend) continue;
        const random = policy.spec.verify?.randomPointInTime !== false;
        runs.push({ target, namespace, name, random, checks: policy.spec.verify?.checks?.length ? policy.spec.verify.checks : DEFAULT_VERIFY_CHECKS });
      }
      return runs;
    });
  }

  /**
   * A random moment of the target's newest change-capture window; `latest` without one, or when the chain cannot be
   * read (logged). Read outside `due`'s transaction: a failed statement there would abort it, and with it the slots.
   */
  async function randomMoment(target: ChainTarget): Promise<string> {
    let windows: ChainReport['windows'];
    try {
      windows = (await chainSummary(db, target)).windows;
    } catch (error) {
      deps.log.warn({ err: error, target: `${target.metadata.namespace}/${target.metadata.name}` }, 'the change-capture chain could not be read; verifying the latest backup');
      return 'latest';
    }
    const window = windows.at(-1);
    if (!window?.from || !window.to) return 'latest';
    const from = Date.parse(window.from);
    const span = Date.parse(window.to) - from;
    return span > 1000 ? new Date(from + randomInt(0, Math.min(span, 2 ** 47))).toISOString() : 'latest';
  }

  return {
    /** One pass: start every verification that fell due. A target that cannot be verified now says why in the log. */
    async tick(now = deps.clock()): Promise<number> {
      let started = 0;
      for (const run of await due(now)) {
        const at = run.random ? await randomMoment(run.target) : 'latest';
        try {
          await deps.sandboxRestores.request(VERIFIER, { target: `${run.namespace}/${run.name}`, mode: 'sandbox', at, ttl: VERIFY_TTL, reason: 'scheduled verification' }, { verify: true, checks: run.checks, deleteAfter: true });
          started++;
        } catch (error) {
          deps.log.warn({ err: error, target: `${run.namespace}/${run.name}` }, 'verification restore not started');
        }
      }
      return started;
    },
  };
}

export type Verifier = ReturnType<typeof createVerifier>;

/** A finished verification restore marks its backup (verified or verifyFailed, when, how long) and its target. */
export async function recordVerification(deps: BackupDeps, tx: Tx, restore: RestoreRow, outcome: { checks?: CheckResult[]; failure?: string; at: Date }): Promise<void> {
  if (!(restore.destination as { verify?: boolean }).verify) return;
  const passed = !outcome.failure && (outcome.checks ?? []).every((c) => c.passed);
  const backup = await tx.backup.update({
    where: { id: restore.backupId },
    data: { verified: passed, verifyFailed: !passed, verifiedAt: outcome.at, verifyRtoSeconds: (outcome.at.getTime() - restore.createdAt.getTime()) / 1000 },
  });
  await deps.resources.patchStatus(tx, 'BackupTarget', restore.targetNamespace, restore.targetName, {
    lastVerification: { ...backupRefView(backup), phase: passed ? 'Verified' : 'VerifyFailed', verifiedAt: outcome.at.toISOString(), restore: restore.name },
  });
}
