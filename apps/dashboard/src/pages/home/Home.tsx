import { useMemo } from 'react';
import { Link } from 'react-aria-components';
import { useQuery } from 'urql';
import { useLiveRefetch } from '../../api/live.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import { EnvelopeTable } from '../envelopes/EnvelopeTable.tsx';
import { WAITING_DAYS } from '../envelopes/ListFilters.tsx';
import { daysAgo, ENVELOPE_CHANGES, ENVELOPE_STATUS_LABELS, type EnvelopeStatus } from '../envelopes/status.ts';
import { RecentActivity } from './RecentActivity.tsx';
import '../envelopes/envelopes.css';
import { Loading, Page } from '@sigil/web-ui';

const HomeQuery = graphql(`
  query Home($since: String!, $waitingSince: String!, $testMode: Boolean) {
    envelopeCounts(since: $since, testMode: $testMode) {
      status
      count
    }
    waiting: envelopes(first: 10, waitingSince: $waitingSince, testMode: $testMode) {
      nodes {
        ...EnvelopeRow
      }
      hasMore
    }
  }
`);

/** The first moment of this calendar month, where the person is. */
function startOfMonth(now = new Date()): string {
  return new Date(now.getFullYear(), now.getMonth(), 1).toISOString();
}

/** This month's envelopes per status; each count links to the list filtered by it. */
function MonthCounts({ counts }: { counts: ReadonlyArray<{ status: string; count: number }> }) {
  const total = counts.reduce((sum, c) => sum + c.count, 0);
  return (
    <ul className="cards env-cards" aria-label={`Envelopes created this month: ${total}`}>
      {counts.map((c) => (
        <li key={c.status} className="stat">
          <Link href={`/envelopes?status=${c.status}`} className="react-aria-Link env-stat-link">
            <span className="value">{c.count}</span> <span>{ENVELOPE_STATUS_LABELS[c.status as EnvelopeStatus] ?? c.status}</span>
          </Link>
        </li>
      ))}
    </ul>
  );
}

export default function Home() {
  const { mode, session } = useSession();
  const variables = useMemo(() => ({ since: startOfMonth(), waitingSince: daysAgo(WAITING_DAYS), testMode: mode === 'test' }), [mode]);
  const [{ data, fetching, error }, refetch] = useQuery({ query: HomeQuery, variables });
  useLiveRefetch(fetching, refetch, { mode, types: ENVELOPE_CHANGES });
  const monthName = new Date().toLocaleString(undefined, { month: 'long' });
  return (
    <Page
      title="Home"
      description={`Welcome back, ${session?.user.name ?? ''}. Everything here is ${mode} mode and updates as it happens.`}
      actions={
        <Link href="/envelopes/new" className="button button-primary">
          Send an envelope
        </Link>
      }
    >
      {fetching && !data && <Loading what="your envelopes" />}
      {error && <p role="alert" className="alert alert-error">{error.message}</p>}
      {data && (
        <>
          <section aria-labelledby="home-month">
            <h2 id="home-month">Envelopes created in {monthName}, by status</h2>
            <MonthCounts counts={data.envelopeCounts} />
          </section>
          <section aria-labelledby="home-waiting">
            <h2 id="home-waiting">Waiting on someone for more than {WAITING_DAYS} days</h2>
            {data.waiting.nodes.length === 0 ? (
              <p className="muted">Nobody has kept an envelope waiting that long.</p>
            ) : (
              <>
                <EnvelopeTable envelopes={data.waiting.nodes} caption={`Envelopes waiting on a recipient for more than ${WAITING_DAYS} days`} />
                {data.waiting.hasMore && (
                  <p>
                    <Link href={`/envelopes?waiting=${WAITING_DAYS}`}>All envelopes waiting more than {WAITING_DAYS} days</Link>
                  </p>
                )}
              </>
            )}
          </section>
        </>
      )}
      <RecentActivity />
    </Page>
  );
}
