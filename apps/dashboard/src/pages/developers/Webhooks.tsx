import { useState, type ReactNode } from 'react';
import { Button, Link } from 'react-aria-components';
import { useQuery } from 'urql';
import type { components } from '@sigil/proto/api/sigil';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import { EndpointForm } from './EndpointForm.tsx';
import { POLL_MS, usePollWhileVisible } from './poll.ts';
import { SecretView } from './SecretView.tsx';
import { successRate } from './words.ts';
import './developers.css';
import { DialogButton, Loading, Page, StatusBadge, When } from '@sigil/web-ui';

const WebhookEndpointsQuery = graphql(`
  query WebhookEndpoints($testMode: Boolean!, $after: String) {
    webhookEndpoints(testMode: $testMode, first: 25, after: $after) {
      nodes {
        id
        url
        description
        events
        enabled
        testMode
        createdAt
        health {
          successRate
          attempts
          failures
        }
        recentDeliveries(first: 1) {
          id
          status
          statusCode
          attemptedAt
        }
      }
      hasMore
      nextCursor
    }
  }
`);

export default function Webhooks() {
  const { can, mode, session } = useSession();
  const [generation, setGeneration] = useState(0);
  if (!can('org:manage')) {
    return (
      <Page title="Webhooks" description="Sigil calls your server when envelopes change.">
        <p className="alert alert-info">
          You cannot manage webhooks: that needs the <code>org:manage</code> permission, which owners and admins of {session?.organization.name} hold. Your
          role is {session?.role}.
        </p>
      </Page>
    );
  }
  return (
    <Page
      title="Webhooks"
      description={`Sigil calls your endpoints when envelopes change. Showing ${mode} endpoints: they receive ${mode} events only.`}
      actions={
        <DialogButton label="Add endpoint" title={`Add a ${mode} webhook endpoint`} variant="button button-primary">
          {(close) => <CreateEndpoint close={close} onCreated={() => setGeneration((g) => g + 1)} />}
        </DialogButton>
      }
    >
      <EndpointTable key={`${mode}-${generation}`} testMode={mode === 'test'} />
    </Page>
  );
}

function CreateEndpoint({ close, onCreated }: { close: () => void; onCreated: () => void }) {
  const { rest } = useSession();
  const [created, setCreated] = useState<components['schemas']['WebhookEndpointCreated']>();
  if (created) {
    return (
      <div className="stack">
        <p className="alert alert-warning" role="note">
          <strong>Copy the signing secret now.</strong> Your server checks each delivery's signature with it. You can reveal it again later on the endpoint's
          page.
        </p>
        <SecretView label="Webhook signing secret" secret={created.secret} copyLabel="Copy signing secret" />
        <div className="dialog-actions">
          <Link className="button" href={`/developers/webhooks/${created.id}`}>
            Open the endpoint
          </Link>
          <Button className="button button-primary" onPress={close}>
            Done
          </Button>
        </div>
      </div>
    );
  }
  return (
    <EndpointForm
      initial={{ url: '', description: '', events: [] }}
      submitLabel="Add endpoint"
      close={close}
      onSubmit={async (input) => {
        setCreated(await unwrap(rest.POST('/v1/webhook-endpoints', { body: input })));
        onCreated();
      }}
    />
  );
}

function EndpointTable({ testMode }: { testMode: boolean }) {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  return (
    <div className="table-wrap">
      <table className="table">
        <caption className="visually-hidden">Webhook endpoints, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Endpoint</th>
            <th scope="col">Events</th>
            <th scope="col">Status</th>
            <th scope="col">Success, last 24 hours</th>
            <th scope="col">Last delivery</th>
          </tr>
        </thead>
        {cursors.map((after, index) => (
          <EndpointPage key={after ?? 'first'} testMode={testMode} after={after} isLast={index === cursors.length - 1} onMore={(next) => setCursors((c) => [...c, next])} />
        ))}
      </table>
    </div>
  );
}

function EndpointPage({ testMode, after, isLast, onMore }: { testMode: boolean; after: string | null; isLast: boolean; onMore: (cursor: string) => void }) {
  const [{ data, fetching, error }, refetch] = useQuery({ query: WebhookEndpointsQuery, variables: { testMode, after } });
  usePollWhileVisible(() => refetch({ requestPolicy: 'network-only' }), POLL_MS);
  const page = data?.webhookEndpoints;
  return (
    <tbody>
      {!page && fetching && <MessageRow><Loading what="webhook endpoints" /></MessageRow>}
      {error && <MessageRow><p role="alert" className="error-text">{error.message}</p></MessageRow>}
      {page && page.nodes.length === 0 && after === null && (
        <MessageRow>
          <span className="muted">No {testMode ? 'test' : 'live'} endpoints yet. Add one to receive events at your server.</span>
        </MessageRow>
      )}
      {page?.nodes.map((endpoint) => {
        const last = endpoint.recentDeliveries[0];
        return (
          <tr key={endpoint.id}>
            <th scope="row" className="cell-name">
              <Link href={`/developers/webhooks/${endpoint.id}`}>{endpoint.url}</Link>
              {endpoint.description && <div className="muted small">{endpoint.description}</div>}
            </th>
            <td>{endpoint.events.length === 0 ? 'Every event' : `${endpoint.events.length} event ${endpoint.events.length === 1 ? 'type' : 'types'}`}</td>
            <td>
              <StatusBadge status={endpoint.enabled ? 'enabled' : 'disabled'} />
            </td>
            <td>{successRate(endpoint.health)}</td>
            <td>
              {last ? (
                <>
                  <StatusBadge status={last.status} /> {last.statusCode ?? 'no answer'} · <When at={last.attemptedAt} />
                </>
              ) : (
                <span className="muted">None yet</span>
              )}
            </td>
          </tr>
        );
      })}
      {isLast && page?.hasMore && page.nextCursor && (
        <MessageRow>
          <Button className="button" onPress={() => onMore(page.nextCursor as string)}>
            Show older endpoints
          </Button>
        </MessageRow>
      )}
    </tbody>
  );
}

function MessageRow({ children }: { children: ReactNode }) {
  return (
    <tr>
      <td colSpan={5}>{children}</td>
    </tr>
  );
}
