import { useState } from 'react';
import { Button, Link, Switch } from 'react-aria-components';
import { useNavigate, useParams } from 'react-router';
import { useQuery } from 'urql';
import type { components } from '@sigil/proto/api/sigil';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import type { WebhookEndpointQuery as EndpointData } from '../../gql/graphql.ts';
import { Deliveries } from './Deliveries.tsx';
import { EndpointForm } from './EndpointForm.tsx';
import { POLL_MS, usePollWhileVisible } from './poll.ts';
import { SecretView } from './SecretView.tsx';
import { EVENT_WORDS, successRate, type WebhookEventType } from './words.ts';
import './developers.css';
import { BusyButton, ConfirmButton, DialogButton, FormError, Loading, Page, StatusBadge, useAction, When } from '@sigil/web-ui';

const WebhookEndpointQuery = graphql(`
  query WebhookEndpoint($id: ID!) {
    webhookEndpoint(id: $id) {
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
    }
  }
`);

type Endpoint = NonNullable<EndpointData['webhookEndpoint']>;

export default function WebhookEndpoint() {
  const { id = '' } = useParams();
  const { can } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: WebhookEndpointQuery, variables: { id }, pause: !can('org:manage') });
  usePollWhileVisible(() => refetch({ requestPolicy: 'network-only' }), POLL_MS);
  const [deliveriesKey, setDeliveriesKey] = useState(0);
  const endpoint = data?.webhookEndpoint;

  if (!can('org:manage')) {
    return (
      <Page title="Webhook endpoint">
        <p className="alert alert-info">
          You cannot manage webhooks: that needs the <code>org:manage</code> permission, which owners and admins hold.
        </p>
      </Page>
    );
  }
  if (!endpoint) {
    return (
      <Page title="Webhook endpoint">
        {fetching && <Loading what="the endpoint" />}
        {error && <p role="alert">{error.message}</p>}
        {data && !endpoint && (
          <p>
            There is no endpoint {id} in this organization (it may have been deleted). <Link href="/developers/webhooks">Back to webhooks</Link>
          </p>
        )}
      </Page>
    );
  }
  const refresh = () => {
    refetch({ requestPolicy: 'network-only' });
    setDeliveriesKey((k) => k + 1);
  };
  return (
    <Page title="Webhook endpoint" description={endpoint.url} actions={<EndpointActions endpoint={endpoint} onChanged={refresh} />}>
      <p>
        <Link href="/developers/webhooks">All webhook endpoints</Link>
      </p>
      <Overview endpoint={endpoint} onChanged={refresh} />
      <SigningSecret endpointId={endpoint.id} />
      <Deliveries endpointId={endpoint.id} refreshKey={deliveriesKey} />
    </Page>
  );
}

function EndpointActions({ endpoint, onChanged }: { endpoint: Endpoint; onChanged: () => void }) {
  const { rest } = useSession();
  const navigate = useNavigate();
  const test = useAction();
  const remove = useAction();
  const [sent, setSent] = useState<string>();
  return (
    <>
      <BusyButton
        className="button"
        busy={test.busy}
        onPress={async () => {
          setSent(undefined);
          const queued = await test.run(() => unwrap(rest.POST('/v1/webhook-endpoints/{id}/test', { params: { path: { id: endpoint.id } } }))).catch(() => undefined);
          if (queued) {
            setSent(`Test ping ${queued.eventId} queued; its delivery appears below in a few seconds.`);
            onChanged();
          }
        }}
      >
        Send test
      </BusyButton>
      <DialogButton label="Edit endpoint" title="Edit webhook endpoint">
        {(close) => (
          <EndpointForm
            initial={{ url: endpoint.url, description: endpoint.description, events: endpoint.events as WebhookEventType[] }}
            submitLabel="Save endpoint"
            close={close}
            onSubmit={async (input) => {
              await unwrap(rest.PATCH('/v1/webhook-endpoints/{id}', { params: { path: { id: endpoint.id } }, body: input }));
              onChanged();
              close();
            }}
          />
        )}
      </DialogButton>
      <ConfirmButton
        label="Delete endpoint"
        title="Delete this endpoint?"
        description={<p>Sigil stops sending events to {endpoint.url} and drops its pending deliveries. Past attempts stay on record.</p>}
        confirmLabel="Delete endpoint"
        error={<FormError error={remove.error} />}
        onConfirm={async () => {
          await remove.run(() => unwrap(rest.DELETE('/v1/webhook-endpoints/{id}', { params: { path: { id: endpoint.id } } })));
          navigate('/developers/webhooks');
        }}
      />
      <div className="page-action-messages">
        <FormError error={test.error} />
        <p role="status" className="muted">
          {sent}
        </p>
      </div>
    </>
  );
}

function Overview({ endpoint, onChanged }: { endpoint: Endpoint; onChanged: () => void }) {
  const { rest, mode } = useSession();
  const toggle = useAction();
  return (
    <section aria-labelledby="overview" className="panel">
      <h2 id="overview">Endpoint</h2>
      {endpoint.testMode !== (mode === 'test') && (
        <p className="alert alert-warning" role="note">
          This is a {endpoint.testMode ? 'test' : 'live'} endpoint: it receives {endpoint.testMode ? 'test' : 'live'} events only, and you are in {mode} mode.
        </p>
      )}
      <dl className="details">
        <dt>URL</dt>
        <dd>
          <code>{endpoint.url}</code>
        </dd>
        <dt>Description</dt>
        <dd>{endpoint.description || <span className="muted">None</span>}</dd>
        <dt>Mode</dt>
        <dd>{endpoint.testMode ? 'Test' : 'Live'}</dd>
        <dt>Events</dt>
        <dd>
          {endpoint.events.length === 0 ? (
            'Every event'
          ) : (
            <ul className="scope-list">
              {endpoint.events.map((type) => (
                <li key={type}>
                  {EVENT_WORDS[type as WebhookEventType] ?? type} <code className="muted">{type}</code>
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>Success, last 24 hours</dt>
        <dd>{successRate(endpoint.health)}</dd>
        <dt>Created</dt>
        <dd>
          <When at={endpoint.createdAt} />
        </dd>
        <dt>Status</dt>
        <dd className="row">
          <StatusBadge status={endpoint.enabled ? 'enabled' : 'disabled'} />
          <Switch
            className="switch"
            isSelected={endpoint.enabled}
            isDisabled={toggle.busy}
            onChange={async (enabled) => {
              const done = await toggle.run(() => unwrap(rest.PATCH('/v1/webhook-endpoints/{id}', { params: { path: { id: endpoint.id } }, body: { enabled } }))).catch(() => undefined);
              if (done) onChanged();
            }}
          >
            <div className="indicator" aria-hidden="true" />
            Receive events
          </Switch>
        </dd>
      </dl>
      <FormError error={toggle.error} />
    </section>
  );
}

type Secret = components['schemas']['WebhookEndpointSecret'];

/** Reveal (dashboard only, recorded) and rotate; the old secret keeps signing for 24 hours after a rotation. */
function SigningSecret({ endpointId }: { endpointId: string }) {
  const { rest } = useSession();
  const action = useAction();
  const [secret, setSecret] = useState<{ value: Secret; rotated: boolean }>();
  const path = { params: { path: { id: endpointId } } };
  return (
    <section aria-labelledby="secret" className="panel stack">
      <h2 id="secret">Signing secret</h2>
      <p className="muted">
        Each delivery carries <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code> headers (Standard Webhooks): an
        HMAC-SHA256 of <code>id.timestamp.body</code> with this secret. Revealing it is recorded.
      </p>
      {secret && (
        <>
          {secret.rotated && <p className="alert alert-warning" role="note">A new secret was made. The previous one also signs until <When at={secret.value.previousSecretExpiresAt} />, so you can update your server meanwhile.</p>}
          <SecretView label="Webhook signing secret" secret={secret.value.secret} copyLabel="Copy signing secret" />
        </>
      )}
      <div className="row">
        {secret ? (
          <Button className="button" onPress={() => setSecret(undefined)}>
            Hide secret
          </Button>
        ) : (
          <BusyButton
            className="button"
            busy={action.busy}
            onPress={async () => {
              const value = await action.run(() => unwrap(rest.POST('/v1/webhook-endpoints/{id}/secret', path))).catch(() => undefined);
              if (value) setSecret({ value, rotated: false });
            }}
          >
            Reveal secret
          </BusyButton>
        )}
        <ConfirmButton
          label="Rotate secret"
          title="Rotate the signing secret?"
          description={<p>A new secret signs from now on. The current one keeps signing beside it for 24 hours, then stops.</p>}
          confirmLabel="Rotate secret"
          error={<FormError error={action.error} />}
          onConfirm={async () => {
            const value = await action.run(() => unwrap(rest.POST('/v1/webhook-endpoints/{id}/secret/rotate', path)));
            setSecret({ value, rotated: true });
          }}
        />
      </div>
      <FormError error={action.error} />
    </section>
  );
}
