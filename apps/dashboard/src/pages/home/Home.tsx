import { Link } from 'react-aria-components';
import { useQuery } from 'urql';
import { useLive } from '../../api/live.ts';
import { useSession } from '../../app/session.tsx';
import { Loading, Page, StatusBadge, When } from '../../components/Page.tsx';
import { graphql } from '../../gql/index.ts';

const HomeQuery = graphql(`
  query Home {
    envelopes(first: 10) {
      nodes {
        id
        status
        createdAt
        template {
          id
          name
        }
        recipients {
          id
          name
          status
        }
      }
    }
  }
`);

export default function Home() {
  const { mode, session } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: HomeQuery });
  useLive(() => refetch({ requestPolicy: 'network-only' }), { mode, types: ['envelope.', 'recipient.'] });
  return (
    <Page title="Home" description={`Welcome back, ${session?.user.name ?? ''}.`}>
      <section aria-labelledby="recent">
        <h2 id="recent">Recent envelopes</h2>
        {fetching && !data && <Loading what="envelopes" />}
        {error && <p role="alert">{error.message}</p>}
        {data && data.envelopes.nodes.length === 0 && <p className="muted">No envelopes yet in {mode} mode.</p>}
        {data && data.envelopes.nodes.length > 0 && (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Envelope</th>
                <th scope="col">Template</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {data.envelopes.nodes.map((envelope) => (
                <tr key={envelope.id}>
                  <td>
                    <Link href={`/envelopes/${envelope.id}`}>{envelope.id}</Link>
                  </td>
                  <td>{envelope.template.name}</td>
                  <td>
                    <StatusBadge status={envelope.status} />
                  </td>
                  <td>
                    <When at={envelope.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </Page>
  );
}
