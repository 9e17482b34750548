import { AppError } from '@sigil/kit/errors';
import type { BackupTargetSpec as TargetSpec } from '@sigil/proto/resources';
import type { RestoreJob } from '@sigil/proto/strata-jobs';

const BUILT_IN = /^(inventory-matches|schema-matches|row-estimates-within-[0-9]+pct|target-checks)$/;
/** What a verification restore checks when its policy names no checks. */
export const DEFAULT_VERIFY_CHECKS = ['inventory-matches', 'schema-matches', 'row-estimates-within-10pct', 'target-checks'];

/**
 * The checks a restore runs, as the mover takes them: built-in names pass as they are; any other name must be one of
 * the target's SQL checks, which then run under `target-checks` (alone, or all of them when `target-checks` is asked).
 */
export function checksFor(spec: TargetSpec, requested: string[] | undefined): Pick<RestoreJob, 'checks' | 'targetChecks'> {
  if (!requested?.length) return {};
  const own = spec.checks ?? [];
  const builtIn = requested.filter((name) => BUILT_IN.test(name));
  const named = requested.filter((name) => !BUILT_IN.test(name));
  const unknown = named.filter((name) => !own.some((check) => check.name === name));
  if (unknown.length) {
    throw new AppError('validation-failed', `checks: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} neither a built-in check (inventory-matches, schema-matches, row-estimates-within-<N>pct, target-checks) nor a check of the target${own.length ? ` (${own.map((c) => c.name).join(', ')})` : ''}`);
  }
  const targetChecks = builtIn.includes('target-checks') ? own : own.filter((check) => named.includes(check.name));
  const checks = named.length && !builtIn.includes('target-checks') ? [...builtIn, 'target-checks'] : builtIn;
  return { checks, ...(targetChecks.length ? { targetChecks: targetChecks.map(({ name, sql, database }) => ({ name, sql, ...(database ? { database } : {}) })) } : {}) };
}
