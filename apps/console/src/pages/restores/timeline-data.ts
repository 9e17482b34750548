import type { TimeRange } from '../../components/timeline/model.ts';
import type { WizardTarget } from './wizard-queries.ts';

const time = (value: string) => Date.parse(value);

/** The consistent-at times of the target's succeeded backups: what a restore without change capture can give. */
export function restorableFulls(target: Pick<WizardTarget, 'backups'>): number[] {
  return target.backups.flatMap((b) => (b.phase === 'Succeeded' && b.time ? [time(b.time)] : []));
}

/** A first view around a moment given in the link: an hour either side, inside the whole history. */
export function viewAround(at: number, limit: TimeRange): TimeRange {
  const half = Math.min(3_600_000, (limit.to - limit.from) / 2);
  const from = Math.max(limit.from, Math.min(at - half, limit.to - 2 * half));
  return { from, to: from + 2 * half };
}
