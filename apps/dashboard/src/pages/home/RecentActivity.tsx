import { Link } from 'react-aria-components';
import { useQuery } from 'urql';
import { Loading, When } from '@sigil/web-ui';
import { useLiveRefetch } from '../../api/live.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import { ENVELOPE_CHANGES } from '../envelopes/status.ts';
import { describeEntry, type TrailEntry } from '../envelopes/trail.ts';

const RecentActivityQuery = graphql(`
  query RecentActivity($testMode: Boolean) {
    recentActivity(first: 15, testMode: $testMode) {
      seq
      type
      at
      actor
      data
      envelope {
        id
        template {
          id
          name
        }
        recipients {
          id
          name
        }
      }
    }
  }
`);

/** The organization's newest audit-trail entries across its envelopes, each linking to its envelope; live. */
export function RecentActivity() {
  const { mode } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: RecentActivityQuery, variables: { testMode: mode === 'test' } });
  useLiveRefetch(fetching, refetch, { mode, types: [...ENVELOPE_CHANGES, 'email.', 'otp.', 'attachment.'] });
  const entries = data?.recentActivity ?? [];
  return (
    <section aria-labelledby="home-activity">
      <h2 id="home-activity">Recent activity</h2>
      {fetching && !data && <Loading what="recent activity" />}
      {error && <p role="alert" className="alert alert-error">{error.message}</p>}
      {data && entries.length === 0 && <p className="muted">Nothing has happened yet in {mode} mode.</p>}
      {entries.length > 0 && (
        <ol className="env-timeline">
          {entries.map((entry) => {
            const nameOf = (id: string) => entry.envelope.recipients.find((r) => r.id === id)?.name;
            return (
              <li key={`${entry.envelope.id}-${entry.seq}`}>
                <div className="what">{describeEntry(entry as TrailEntry, nameOf)}</div>
                <div className="muted small">
                  <When at={entry.at} /> ·{' '}
                  <Link href={`/envelopes/${entry.envelope.id}`}>
                    {entry.envelope.template.name} <span className="visually-hidden">envelope {entry.envelope.id}</span>
                  </Link>
                </div>
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
