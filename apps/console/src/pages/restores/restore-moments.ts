import type { components } from '@sigil/proto/api/strata';

export type RestPlan = components['schemas']['RestorePlan'];

/**
 * The moment a restore was asked for and the one its data show. With change-log segments to replay it restores
 * exactly to the moment asked; without, to its base backup's consistent time (the newest full at or before it).
 * Undefined where the restore does not say (a restore of a backup by id asks for no moment).
 */
export function momentsOf(plan: RestPlan | null | undefined, backupTime: string | null | undefined): { asked?: number; effective?: number } {
  const asked = plan?.targetTime ? Date.parse(plan.targetTime) : undefined;
  const base = backupTime ? Date.parse(backupTime) : undefined;
  const effective = (plan?.segments ?? 0) > 0 ? asked : base;
  return { ...(asked !== undefined ? { asked } : {}), ...(effective !== undefined ? { effective } : {}) };
}
