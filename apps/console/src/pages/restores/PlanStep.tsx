import { Loading } from '@sigil/web-ui';
import { bytes, count, duration, formatMoment } from '../../format.ts';
import type { Moment } from './moment.ts';
import type { Plan } from './wizard-queries.ts';

/**
 * Step 5, the plan, as the server computes it for the target and the moment: the base backup, the change log to
 * replay, what is read from the store, and the moment the data will show (stressed when it is not the one asked);
 * or why the moment cannot be restored.
 */
export function PlanStep({ plan, loading, problem, moment }: { plan: Plan | null | undefined; loading: boolean; problem?: string; moment: Moment }) {
  if (moment.kind === 'invalid') return <p className="muted">The plan follows once the moment above is a moment.</p>;
  if (problem) return <p className="rst-no rst-plan-problem"><strong>Not restorable.</strong> {problem}</p>;
  if (!plan) return loading ? <Loading what="the plan" /> : <p className="muted">No plan: the target cannot be read.</p>;
  if (!plan.restorable) {
    return (
      <p className="rst-no rst-plan-problem">
        <strong>Not restorable.</strong> {plan.reason}
      </p>
    );
  }
  const base = plan.baseTime ? Date.parse(plan.baseTime) : undefined;
  const effective = plan.effectiveTime ? Date.parse(plan.effectiveTime) : undefined;
  const asked = plan.targetTime ? Date.parse(plan.targetTime) : undefined;
  return (
    <div aria-busy={loading}>
      {effective !== undefined && asked !== undefined && effective !== asked && (
        <p className="alert rst-alert-warning">
          <strong>The data will be as of {formatMoment(effective)}</strong>, {duration((asked - effective) / 1000)} before the moment asked ({formatMoment(asked)}): without a change-capture window there, a restore gives the newest full backup at or before it.
        </p>
      )}
      <dl className="rst-facts">
        <div>
          <dt>Data as of</dt>
          <dd>
            <strong>{effective !== undefined ? formatMoment(effective) : '—'}</strong>
            {moment.kind === 'latest' && <div className="muted small">Latest now; the restore takes whatever is newest when it starts.</div>}
          </dd>
        </div>
        <div>
          <dt>Base backup</dt>
          <dd>
            <code>{plan.baseBackupID}</code>
            {base !== undefined && <div className="muted small">consistent at {formatMoment(base)}</div>}
          </dd>
        </div>
        <div>
          <dt>Change log to replay</dt>
          <dd>{plan.segments > 0 ? `${count(plan.segments, 'segment')}, up to the moment` : 'none: the backup as it was'}</dd>
        </div>
        <div>
          <dt>Read from the store</dt>
          <dd>{bytes(plan.bytes)}</dd>
        </div>
      </dl>
    </div>
  );
}
