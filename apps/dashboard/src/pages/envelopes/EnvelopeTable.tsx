import { Link } from 'react-aria-components';
import { StatusBadge, When } from '@sigil/web-ui';
import { graphql } from '../../gql/index.ts';
import type { EnvelopeRowFragment } from '../../gql/graphql.ts';

/** What a row of an envelope list shows; the list queries spread it (`...EnvelopeRow`). */
export const EnvelopeRowFields = graphql(`
  fragment EnvelopeRow on Envelope {
    id
    status
    seal
    externalId
    createdAt
    sentAt
    completedAt
    template {
      id
      name
    }
    recipients {
      id
      name
      email
      order
      status
      hasTurn
      sentAt
    }
  }
`);

/** Who signs, each with where they stand; the one whose turn it is says so (and since when). */
function RecipientSummary({ recipients }: { recipients: EnvelopeRowFragment['recipients'] }) {
  return (
    <ul className="env-recipients">
      {recipients.map((r) => (
        <li key={r.id}>
          <span>{r.name}</span> <StatusBadge status={r.hasTurn ? 'their_turn' : r.status} />
          {r.hasTurn && r.sentAt && (
            <span className="muted env-since">
              {' '}
              since <When at={r.sentAt} />
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

/** Envelopes as a table: the envelope (a link to its page), its recipients, status and dates. */
export function EnvelopeTable({ envelopes, caption }: { envelopes: readonly EnvelopeRowFragment[]; caption: string }) {
  return (
    <div className="table-wrap" role="region" aria-label={caption} tabIndex={0}>
      <table className="table env-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Envelope</th>
            <th scope="col">Recipients</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {envelopes.map((envelope) => (
            <tr key={envelope.id}>
              <td>
                <Link href={`/envelopes/${envelope.id}`} className="react-aria-Link env-link">
                  {envelope.template.name}
                  <span className="env-id"> {envelope.id}</span>
                </Link>
                {envelope.externalId && <div className="muted small">External ID {envelope.externalId}</div>}
              </td>
              <td>
                <RecipientSummary recipients={envelope.recipients} />
              </td>
              <td>
                <StatusBadge status={envelope.status} />
                {envelope.seal === 'sealed' && (
                  <>
                    {' '}
                    <StatusBadge status="sealed" />
                  </>
                )}
              </td>
              <td>
                <When at={envelope.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
