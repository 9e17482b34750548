import { Link } from 'react-aria-components';
import { useParams } from 'react-router';
import { useQuery } from 'urql';
import { FormError, Loading, Page, StatusBadge, When } from '@sigil/web-ui';
import { refusalOf } from '../../api/graphql-refusal.ts';
import { useStrataRefetch } from '../../api/events.ts';
import { bytes, count, duration, formatMoment } from '../../format.ts';
import { graphql } from '../../gql';
import { BackupsTable } from './BackupsTable.tsx';
import { Conditions } from './Conditions.tsx';
import { InventoryView } from './InventoryView.tsx';
import { TargetActions } from './TargetActions.tsx';
import { TargetTimeline } from './TargetTimeline.tsx';
import './target.css';

const TargetQuery = graphql(`
  query ConsoleTarget($namespace: String!, $name: String!) {
    strataTarget(namespace: $namespace, name: $name) {
      namespace
      name
      engine
      org
      project
      env
      policy
      store
      phase
      message
      health
      healthReason
      suspended
      pitr
      chainBroken
      chainBrokenReason
      lagSeconds
      lastSuccess
      nextRun
      lastVerification
      lastVerificationPassed
      running
      backupCount
      segmentCount
      gaps
      storedBytes
      replicationDenied
      replicationFix
      windows {
        from
        to
      }
      lastBackup {
        id
      }
      conditions {
        type
        status
        reason
        message
        lastTransitionTime
      }
    }
  }
`);

/** One target: what it can be restored to and why, its history, its backups, what its database holds. */
export default function TargetPage() {
  const { ns = '', name = '' } = useParams();
  const [{ data, fetching, error }, refetch] = useQuery({ query: TargetQuery, variables: { namespace: ns, name } });
  useStrataRefetch(fetching, refetch, { kinds: ['backup', 'target', 'catalog'], filter: (e) => e.kind === 'catalog' || e.namespace === ns });
  const target = data?.strataTarget;
  if (!target) {
    return (
      <Page title={`${ns}/${name}`}>
        {fetching ? <Loading what="the target" /> : error ? <FormError error={refusalOf(error)} /> : <p>There is no target {ns}/{name}, or your groups do not let you see it.</p>}
      </Page>
    );
  }
  const labels = [target.org, target.project, target.env].filter(Boolean).join(' / ');
  return (
    <Page title={`${target.namespace}/${target.name}`} description={`${target.engine} · policy ${target.policy} · store ${target.store}${labels ? ` · ${labels}` : ''}`} actions={<TargetActions target={target} />}>
      <FormError error={refusalOf(error)} />
      {target.replicationDenied && (
        <div className="alert alert-info" role="note">
          <strong>Logical backups only:</strong> {target.replicationDenied} {target.replicationFix && <>To fix: {target.replicationFix}</>}
        </div>
      )}
      <dl className="facts">
        <div>
          <dt>Health</dt>
          <dd>
            <StatusBadge status={target.health} /> {target.health !== 'ok' && target.healthReason}
          </dd>
        </div>
        <div>
          <dt>Restorable</dt>
          <dd>{target.windows.length ? target.windows.map((w) => <div key={w.from}>{formatMoment(Date.parse(w.from))} → {formatMoment(Date.parse(w.to))}</div>) : <span>{target.pitr ? 'no window yet' : 'to each full backup (no change capture)'}</span>}</dd>
        </div>
        <div>
          <dt>Change log</dt>
          <dd>{!target.pitr ? 'off' : target.chainBroken ? <strong className="danger">broken: {target.chainBrokenReason}</strong> : `lag ${duration(target.lagSeconds)}, ${count(target.segmentCount, 'segment')}${target.gaps ? `, ${count(target.gaps, 'gap')}` : ''}`}</dd>
        </div>
        <div>
          <dt>Last backup</dt>
          <dd>
            <When at={target.lastSuccess} /> {target.running && <span className="muted">(running: {target.running})</span>}
          </dd>
        </div>
        <div>
          <dt>Last verification</dt>
          <dd>
            <When at={target.lastVerification} /> {target.lastVerificationPassed === false && <strong className="danger">failed</strong>}
            {target.lastVerificationPassed === true && <span>passed</span>}
          </dd>
        </div>
        <div>
          <dt>Next run</dt>
          <dd>{target.suspended ? 'suspended' : <When at={target.nextRun} />}</dd>
        </div>
        <div>
          <dt>Stored</dt>
          <dd>
            {bytes(target.storedBytes)} in {count(target.backupCount, 'backup')}
          </dd>
        </div>
      </dl>
      <TargetTimeline namespace={target.namespace} name={target.name} />
      <BackupsTable namespace={target.namespace} name={target.name} />
      {target.lastBackup && <InventoryView backupId={target.lastBackup.id} />}
      <Conditions conditions={target.conditions} />
      <p>
        <Link href={`/restores?target=${encodeURIComponent(`${target.namespace}/${target.name}`)}`}>Restores of this target</Link>
      </p>
    </Page>
  );
}
