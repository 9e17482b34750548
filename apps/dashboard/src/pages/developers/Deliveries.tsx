import { useState } from 'react';
import { Button } from 'react-aria-components';
import { useQuery } from 'urql';
import { FormError, PagedBodies, PagedRows, StatusBadge, type PageSlot, useAction, When } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import type { WebhookDeliveriesQuery } from '../../gql/graphql.ts';
import { POLL_MS, usePollWhileVisible } from './poll.ts';

const DeliveriesQuery = graphql(`
  query WebhookDeliveries($id: ID!, $after: String) {
    webhookEndpoint(id: $id) {
      id
      deliveries(first: 20, after: $after) {
        nodes {
          id
          eventId
          eventType
          attempt
          status
          statusCode
          error
          durationMs
          attemptedAt
          nextAttemptAt
        }
        hasMore
        nextCursor
      }
    }
  }
`);

type Delivery = NonNullable<WebhookDeliveriesQuery['webhookEndpoint']>['deliveries']['nodes'][number];

/**
 * Every attempt to deliver to the endpoint, newest first, with its answer and timing. Deliveries have no domain
 * event, so the newest page is read again every few seconds while the page is visible.
 */
export function Deliveries({ endpointId, refreshKey }: { endpointId: string; refreshKey: number }) {
  const redeliver = useAction();
  const [queued, setQueued] = useState<string>();
  const { rest } = useSession();

  async function deliverAgain(delivery: Delivery) {
    setQueued(undefined);
    const result = await redeliver
      .run(() => unwrap(rest.POST('/v1/events/{id}/redeliver', { params: { path: { id: delivery.eventId } }, body: { endpoint: endpointId } })))
      .catch(() => undefined);
    if (result) setQueued(`${delivery.eventType} (${delivery.eventId}) was queued again; its attempt appears here in a few seconds.`);
  }

  return (
    <section aria-labelledby="deliveries" className="stack">
      <h2 id="deliveries">Deliveries</h2>
      <FormError error={redeliver.error} />
      <p role="status" className="muted status-line">
        {queued}
      </p>
      <div className="table-wrap">
        <table className="table">
          <caption className="visually-hidden">Delivery attempts, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Attempt</th>
              <th scope="col">Status</th>
              <th scope="col">Answer</th>
              <th scope="col">Time taken</th>
              <th scope="col">Attempted</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <PagedBodies>
            {/* A change made on the page (a test sent, say) reads the newest page again at once. */}
            {(slot) => <DeliveryPage key={slot.index === 0 ? refreshKey : 0} endpointId={endpointId} slot={slot} onDeliverAgain={deliverAgain} />}
          </PagedBodies>
        </table>
      </div>
    </section>
  );
}

function DeliveryPage({ endpointId, slot, onDeliverAgain }: { endpointId: string; slot: PageSlot; onDeliverAgain: (delivery: Delivery) => void }) {
  const [{ data, fetching, error }, refetch] = useQuery({ query: DeliveriesQuery, variables: { id: endpointId, after: slot.after } });
  // Only the newest page gains attempts; older pages stay as they were read.
  usePollWhileVisible(() => {
    if (slot.after === null) refetch({ requestPolicy: 'network-only' });
  }, POLL_MS);
  return (
    <PagedRows
      slot={slot}
      page={data?.webhookEndpoint?.deliveries}
      fetching={fetching}
      error={error}
      columns={7}
      what="deliveries"
      empty={<span className="muted">No deliveries yet. Send a test to see one.</span>}
      olderLabel="Show older deliveries"
    >
      {(delivery) => (
        <tr>
          <td>
            <code>{delivery.eventType}</code>
            <div className="muted small">{delivery.eventId}</div>
          </td>
          <td>{delivery.attempt}</td>
          <td>
            <StatusBadge status={delivery.status} />
            {delivery.nextAttemptAt && (
              <div className="muted small">
                next try <When at={delivery.nextAttemptAt} />
              </div>
            )}
          </td>
          <td>
            {delivery.statusCode !== null && delivery.statusCode !== undefined ? <code>HTTP {delivery.statusCode}</code> : <span className="muted">No answer</span>}
            {delivery.error && <div className="small error-text">{delivery.error}</div>}
          </td>
          <td>{delivery.durationMs !== null && delivery.durationMs !== undefined ? `${delivery.durationMs} ms` : '—'}</td>
          <td>
            <When at={delivery.attemptedAt} />
          </td>
          <td>
            <Button className="button" aria-label={`Deliver again: ${delivery.eventType} ${delivery.eventId}`} onPress={() => onDeliverAgain(delivery)}>
              Deliver again
            </Button>
          </td>
        </tr>
      )}
    </PagedRows>
  );
}
