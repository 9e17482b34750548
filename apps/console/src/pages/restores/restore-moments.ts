/** The part of a restore's plan (GraphQL `RestorePlan`) that says which moments it restores. */
export interface PlanMoments {
  readonly targetTime?: string | null;
  readonly effectiveTime?: string | null;
  /** Change-log segments replayed; a plan made before the effective time was recorded and replaying some restored to targetTime. */
  readonly segments?: number | null;
}

/**
 * The moment a restore was asked for (its plan's targetTime) and the one its data show (its plan's effectiveTime, as
 * the catalog planned it). Restores planned before the catalog recorded the effective time do not carry it: those
 * that replayed the change log show the moment asked, the others (and a backup chosen by id, which has no plan) the
 * backup's own time.
 * Undefined where the restore does not say (a restore of a backup by id asks for no moment).
 */
export function momentsOf(plan: PlanMoments | null | undefined, backupTime: string | null | undefined): { asked?: number; effective?: number } {
  const asked = timeOf(plan?.targetTime);
  const replayed = (plan?.segments ?? 0) > 0 ? asked : undefined;
  const effective = timeOf(plan?.effectiveTime) ?? replayed ?? timeOf(backupTime);
  return { ...(asked !== undefined ? { asked } : {}), ...(effective !== undefined ? { effective } : {}) };
}

function timeOf(text: string | null | undefined): number | undefined {
  return text ? Date.parse(text) : undefined;
}
