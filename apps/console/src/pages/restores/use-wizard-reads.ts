import { useQuery } from 'urql';
import { useStrataEvents } from '../../api/events.ts';
import { refusalOf } from '../../api/graphql-refusal.ts';
import { atParam, type Moment } from './moment.ts';
import { useDebounced } from './use-debounced.ts';
import { useTargetTimeline } from './use-timeline.ts';
import { BackupInventoryQuery, PlanQuery, TargetQuery } from './wizard-queries.ts';

/**
 * What the wizard reads for the chosen target and moment: the target (windows, backups), its timeline, the plan
 * (asked again whenever the target or the moment settles) and the base backup's inventory (for the tables). Live:
 * a new backup or segment of the target reads them again.
 */
export function useWizardReads(targetRef: string, moment: Moment, focusAt: number | undefined) {
  const [namespace = '', name = ''] = targetRef.split('/');
  const hasTarget = namespace !== '' && name !== '';
  const [targetRead, refetchTarget] = useQuery({ query: TargetQuery, variables: { namespace, name }, pause: !hasTarget });
  const timeline = useTargetTimeline(namespace, name, focusAt);

  const at = useDebounced(atParam(moment), 300);
  const [planRead, refetchPlan] = useQuery({ query: PlanQuery, variables: { namespace, name, at: at ?? 'latest' }, pause: !hasTarget || at === undefined, requestPolicy: 'cache-and-network' });
  const plan = planRead.data?.strataPlan;
  const baseID = plan?.restorable ? (plan.baseBackupID ?? '') : '';
  const [inventoryRead] = useQuery({ query: BackupInventoryQuery, variables: { id: baseID }, pause: !baseID });

  useStrataEvents(
    () => {
      refetchTarget({ requestPolicy: 'network-only' });
      refetchPlan({ requestPolicy: 'network-only' });
      timeline.reload();
    },
    { kinds: ['backup', 'target', 'catalog'], filter: (event) => event.kind === 'catalog' || event.namespace === namespace },
  );

  return {
    target: targetRead.data?.strataTarget,
    targetMissing: targetRead.data !== undefined && !targetRead.data.strataTarget,
    targetError: refusalOf(targetRead.error),
    timeline,
    plan,
    planLoading: planRead.fetching || at !== atParam(moment),
    /** A plan that could not be made at all (422: no completed backup yet), in the API's words. */
    planProblem: refusalOf(planRead.error)?.problem.detail,
    baseBackup: inventoryRead.data?.strataBackup ?? undefined,
    inventoryLoading: inventoryRead.fetching,
    inventoryError: refusalOf(inventoryRead.error),
  };
}
