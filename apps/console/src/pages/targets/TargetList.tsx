import { useMemo } from 'react';
import { Link } from 'react-aria-components';
import { useNavigate, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { FormError, Loading, Page, StatusBadge, When } from '@sigil/web-ui';
import { refusalOf } from '../../api/graphql-refusal.ts';
import { useStrataRefetch } from '../../api/events.ts';
import { graphql } from '../../gql';
import { TimeBar } from '../../components/timeline/TimeBar.tsx';
import { Scroller } from '../../components/Scroller.tsx';
import { bytes, count, duration } from '../../format.ts';
import { TargetFilters, filtersFrom, searchOf } from './TargetFilters.tsx';

const TargetsQuery = graphql(`
  query ConsoleTargets($org: String, $project: String, $env: String, $health: TargetHealth, $q: String) {
    strataTargets(org: $org, project: $project, env: $env, health: $health, q: $q) {
      namespace
      name
      engine
      org
      project
      env
      health
      healthReason
      phase
      suspended
      pitr
      chainBroken
      chainBrokenReason
      chainBrokenSince
      lastVerification
      lastVerificationPassed
      windows {
        from
        to
      }
      lagSeconds
      lastSuccess
      backupCount
      storedBytes
      lastBackup {
        id
        time
        mode
        verified
        verifyFailed
      }
    }
  }
`);

const BAR_DAYS = 7;

/** Every target the caller may see: health, last backup and verification, change-log lag; live from the event stream. */
export default function TargetList() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const filters = useMemo(() => filtersFrom(params), [params]);
  const [{ data, fetching, error }, refetch] = useQuery({ query: TargetsQuery, variables: filters });
  useStrataRefetch(fetching, refetch, { kinds: ['backup', 'target', 'catalog'] });
  const targets = data?.strataTargets;
  // One scale for every row, so the bars compare: the last week, or less when no window is older; it moves with each refetch.
  const barRange = useMemo(() => {
    const now = Date.now();
    const oldest = Math.min(...(targets ?? []).flatMap((t) => t.windows.map((w) => Date.parse(w.from))), now - 3_600_000);
    return { from: Math.max(now - BAR_DAYS * 86_400_000, oldest - (now - oldest) * 0.05), to: now };
  }, [data]);
  return (
    <Page title="Targets" description="The databases Strata protects, what can be restored, and how they are doing.">
      <TargetFilters filters={filters} onChange={(next) => navigate({ search: searchOf(next) }, { replace: true })} />
      <FormError error={refusalOf(error)} />
      {!targets && fetching && <Loading what="the targets" />}
      {targets && (
        <Scroller label="Targets">
          <thead>
            <tr>
              <th scope="col">Target</th>
              <th scope="col">Health</th>
              <th scope="col">Last backup</th>
              <th scope="col">Restorable, last {duration((barRange.to - barRange.from) / 1000)}</th>
              <th scope="col">Change log</th>
              <th scope="col">Stored</th>
            </tr>
          </thead>
          <tbody>
            {targets.length === 0 && (
              <tr>
                <td colSpan={6}>No target matches. Targets appear when a BackupTarget resource is applied (Settings, or `strata apply`).</td>
              </tr>
            )}
            {targets.map((t) => (
              <tr key={`${t.namespace}/${t.name}`}>
                <th scope="row">
                  <Link href={`/targets/${t.namespace}/${t.name}`}>
                    {t.namespace}/{t.name}
                  </Link>
                  <div className="muted small">
                    {t.engine} · {[t.org, t.project, t.env].filter(Boolean).join(' / ') || 'no labels'}
                  </div>
                </th>
                <td>
                  <StatusBadge status={t.health} />
                  {t.health !== 'ok' && t.healthReason && <div className="small">{t.healthReason}</div>}
                </td>
                <td>
                  <When at={t.lastBackup?.time ?? t.lastSuccess} />
                  {t.lastBackup && (
                    <div className="muted small">
                      {t.lastBackup.mode}, {t.lastBackup.verifyFailed ? 'verification failed' : t.lastBackup.verified ? 'verified' : 'not verified'}
                    </div>
                  )}
                </td>
                <td>
                  {t.pitr ? (
                    <TimeBar
                      range={barRange}
                      windows={t.windows.map((w) => ({ from: Date.parse(w.from), to: Date.parse(w.to) }))}
                      broken={t.chainBroken ? { at: t.chainBrokenSince ? Date.parse(t.chainBrokenSince) : undefined, reason: t.chainBrokenReason } : undefined}
                      label={`${t.namespace}/${t.name}`}
                    />
                  ) : (
                    <span>to each full backup</span>
                  )}
                  <div className="muted small">
                    {t.lastVerification ? (
                      <>
                        verification {t.lastVerificationPassed ? 'passed' : 'failed'} <When at={t.lastVerification} />
                      </>
                    ) : (
                      'never verified'
                    )}
                  </div>
                </td>
                <td>
                  {!t.pitr ? <span className="muted">off</span> : t.chainBroken ? <strong className="danger">broken: {t.chainBrokenReason}</strong> : <span>lag {duration(t.lagSeconds)}</span>}
                </td>
                <td>
                  {bytes(t.storedBytes)}
                  <div className="muted small">{count(t.backupCount, 'backup')}</div>
                </td>
              </tr>
            ))}
          </tbody>
        </Scroller>
      )}
    </Page>
  );
}
