import { useQuery } from 'urql';
import { FormError, Loading, Page } from '@sigil/web-ui';
import { useStrataRefetch } from '../../api/events.ts';
import { graphql } from '../../gql';
import { BackupRunsTable, RestoresTable } from './ActivityTables.tsx';
import { refusalOf } from '../../api/graphql-refusal.ts';
import './history.css';

const ActivityQuery = graphql(`
  query ConsoleActivity($limit: Int) {
    strataActivity(limit: $limit) {
      backups {
        namespace
        name
        target
        phase
        message
        reason
        created
        bytes
        durationSeconds
        progress {
          stage
          bytes
          totalBytes
        }
      }
      restores {
        namespace
        name
        mode
        phase
        message
        requestedBy
        created
        durationSeconds
        target {
          namespace
          name
        }
        progress {
          stage
          bytes
          totalBytes
        }
      }
    }
  }
`);

/** How many backup runs, and how many restores, the page shows. */
const LIMIT = 50;

/** Running and recent backup runs and restores, newest first; live from the event stream. */
export default function Activity() {
  const [{ data, fetching, error }, refetch] = useQuery({ query: ActivityQuery, variables: { limit: LIMIT } });
  useStrataRefetch(fetching, refetch, { kinds: ['backup', 'restore', 'sandbox'] });
  const activity = data?.strataActivity;
  return (
    <Page title="Activity" description={`Backups and restores running now and the latest ${LIMIT} of each, newest first. Updates by itself.`}>
      <FormError error={refusalOf(error)} />
      {!activity && fetching && <Loading what="the activity" />}
      {activity && (
        <>
          <section aria-labelledby="backup-runs-heading" className="hist-runs">
            <h2 id="backup-runs-heading">Backup runs</h2>
            <BackupRunsTable runs={activity.backups} />
          </section>
          <section aria-labelledby="restores-heading">
            <h2 id="restores-heading">Restores</h2>
            <RestoresTable restores={activity.restores} />
          </section>
        </>
      )}
    </Page>
  );
}
