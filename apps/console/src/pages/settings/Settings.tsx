import { useQuery } from 'urql';
import { FormError, Loading, Page } from '@sigil/web-ui';
import { useStrataEvents } from '../../api/events.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql';
import { refusalOf } from '../../api/graphql-refusal.ts';
import { ApplyResources } from './ApplyResources.tsx';
import { SettingsView } from './SettingsView.tsx';
import './settings.css';

const SettingsQuery = graphql(`
  query ConsoleSettings {
    strataSettings {
      version
      catalog {
        targets
        backups
        version
      }
      stores {
        name
        endpoint
        region
        bucket
        prefix
        phase
        message
        readOnly
      }
      policies {
        namespace
        name
        store
        schedule
        verify
        retention
        pitr
      }
    }
  }
`);

/**
 * How Strata is set up, read-only (stores, policies, the catalog's counts), and for restorer-admin the YAML apply
 * that changes it. Live: the catalog's events read it again.
 */
export default function Settings() {
  const { can } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: SettingsQuery });
  const reread = () => refetch({ requestPolicy: 'network-only' });
  useStrataEvents(reread, { kinds: ['catalog', 'target'] });
  const settings = data?.strataSettings;
  return (
    <Page title="Settings" description="The stores backups go to, the policies that schedule and keep them, and the catalog that records them.">
      <FormError error={refusalOf(error)} />
      {!settings && fetching && <Loading what="the settings" />}
      {settings && <SettingsView settings={settings} />}
      {can('restorer-admin') ? (
        <ApplyResources onApplied={reread} />
      ) : (
        <p className="muted set-note">Stores, policies and targets are changed by applying resources, which needs the role restorer-admin (or <code>strata apply</code> with such a login).</p>
      )}
    </Page>
  );
}
