import { useEffect, useState } from 'react';
import { Button } from 'react-aria-components';
import { useQuery } from 'urql';
import { Loading, When } from '@sigil/web-ui';
import { graphql } from '../../gql/index.ts';

const TRAIL_PAGE = 100;

const AuditTrailQuery = graphql(`
  query EnvelopeAuditTrail($id: ID!, $first: Int!) {
    envelope(id: $id) {
      id
      events(first: $first) {
        entries {
          seq
          type
          at
          hash
          prevHash
        }
        hasMore
        chain {
          valid
          head
          length
          firstInvalidSeq
        }
      }
    }
  }
`);

/** The hash chain's check: whether every link holds, its length and head (what the certificate of completion prints). */
function ChainStatus({ chain }: { chain: { valid: boolean; head?: string | null; length: number; firstInvalidSeq?: number | null } }) {
  return (
    <div className="env-chain">
      <span className={`badge ${chain.valid ? 'badge-completed' : 'badge-failed'}`}>{chain.valid ? 'Chain valid' : 'Chain broken'}</span>
      <span>
        {chain.length} {chain.length === 1 ? 'entry' : 'entries'}
        {!chain.valid && chain.firstInvalidSeq != null && <>, first bad link at entry {chain.firstInvalidSeq}</>}
      </span>
      {chain.head && (
        <span>
          Head <code className="env-hash">{chain.head}</code>
        </span>
      )}
    </div>
  );
}

/**
 * The envelope's audit trail from the evidence subgraph, with the verification of its whole hash chain. `version`
 * changes when the live stream brings a new entry: the trail is read again.
 */
export function AuditTrail({ envelopeId, version }: { envelopeId: string; version: number }) {
  const [first, setFirst] = useState(TRAIL_PAGE);
  const [{ data, fetching, error }, refetch] = useQuery({ query: AuditTrailQuery, variables: { id: envelopeId, first } });
  useEffect(() => {
    if (version > 0) refetch({ requestPolicy: 'network-only' });
  }, [version, refetch]);
  const trail = data?.envelope?.events;
  return (
    <section aria-labelledby="env-audit">
      <h2 id="env-audit">Audit trail</h2>
      {fetching && !data && <Loading what="the audit trail" />}
      {error && !trail && <p className="muted">The audit trail starts with the envelope's first recorded event; none is recorded yet.</p>}
      {trail && (
        <>
          <ChainStatus chain={trail.chain} />
          <div className="table-wrap" role="region" aria-label="Audit trail table" tabIndex={0}>
            <table className="table env-trail">
              <caption className="visually-hidden">Audit trail entries in chain order</caption>
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Event</th>
                  <th scope="col">When</th>
                  <th scope="col">Hash</th>
                </tr>
              </thead>
              <tbody>
                {trail.entries.map((entry) => (
                  <tr key={entry.seq}>
                    <td>{entry.seq}</td>
                    <td>
                      <code>{entry.type}</code>
                    </td>
                    <td>
                      <When at={entry.at} />
                    </td>
                    <td>
                      <code className="env-hash" title={`previous ${entry.prevHash}`}>
                        {entry.hash.slice(0, 12)}…
                      </code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {trail.hasMore && (
            <Button className="button" onPress={() => setFirst((n) => Math.min(n + TRAIL_PAGE, 500))}>
              Show more entries
            </Button>
          )}
        </>
      )}
    </section>
  );
}
