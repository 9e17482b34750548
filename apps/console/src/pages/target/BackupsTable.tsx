import { useState } from 'react';
import { Button } from 'react-aria-components';
import { useQuery } from 'urql';
import { FormError, Loading, StatusBadge, When } from '@sigil/web-ui';
import { refusalOf } from '../../api/graphql-refusal.ts';
import { useSession } from '../../app/session.tsx';
import { useStrataRefetch } from '../../api/events.ts';
import { bytes, duration, formatMoment } from '../../format.ts';
import { graphql } from '../../gql';
import { PinButton, UnpinButton } from './PinControls.tsx';
import { ScrollRegion } from '../../components/Scroller.tsx';
import { CompareBar, CompareCheckbox, useComparePicks } from '../insight/ComparePicker.tsx';

const BackupsQuery = graphql(`
  query ConsoleTargetBackups($namespace: String!, $name: String!, $limit: Int!) {
    strataTarget(namespace: $namespace, name: $name) {
      namespace
      name
      backupCount
      backups(limit: $limit) {
        id
        phase
        mode
        reason
        time
        completed
        storedBytes
        durationSeconds
        verified
        verifyFailed
        pinned
        pinReason
        pinExpires
        retainedBy
        expiresAt
        error
      }
    }
  }
`);

const PAGE = 50;

/** Every run of the target, newest first, a page at a time: what it holds, whether it was verified, why it is kept. */
export function BackupsTable({ namespace, name }: { namespace: string; name: string }) {
  const { can } = useSession();
  const [limit, setLimit] = useState(PAGE);
  const [{ data, fetching, error }, refetch] = useQuery({ query: BackupsQuery, variables: { namespace, name, limit } });
  useStrataRefetch(fetching, refetch, { kinds: ['backup'], filter: (e) => e.namespace === namespace });
  const backups = data?.strataTarget?.backups;
  const operator = can('operator');
  const compare = useComparePicks();
  return (
    <section aria-labelledby="backups-heading" className="target-section">
      <h2 id="backups-heading">Backups</h2>
      <FormError error={refusalOf(error)} />
      {!backups && fetching && <Loading what="the backups" />}
      {backups && backups.length > 1 && <CompareBar namespace={namespace} name={name} picked={compare.picked.filter((id) => backups.some((b) => b.id === id && b.phase === 'Succeeded'))} />}
      {backups && (
        <ScrollRegion label="Backups">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Compare</th>
                <th scope="col">Data as of</th>
                <th scope="col">Phase</th>
                <th scope="col">Mode</th>
                <th scope="col">Stored</th>
                <th scope="col">Verified</th>
                <th scope="col">Kept because</th>
                <th scope="col">Expires</th>
                {operator && <th scope="col">Pin</th>}
              </tr>
            </thead>
            <tbody>
              {backups.length === 0 && (
                <tr>
                  <td colSpan={operator ? 9 : 8}>No backup yet.</td>
                </tr>
              )}
              {backups.map((b) => (
                <tr key={b.id}>
                  <td>{b.phase === 'Succeeded' && <CompareCheckbox moment={formatMoment(Date.parse(b.time ?? b.completed ?? ''))} picked={compare.picked.includes(b.id)} onChange={(on) => compare.toggle(b.id, on)} />}</td>
                  <th scope="row">
                    <When at={b.time ?? b.completed} />
                    <div className="muted small">
                      <code>{b.id}</code> · {b.reason}
                    </div>
                  </th>
                  <td>
                    <StatusBadge status={b.phase} />
                    {b.error && <div className="small danger">{b.error}</div>}
                  </td>
                  <td>{b.mode}</td>
                  <td>
                    {bytes(b.storedBytes)}
                    {b.durationSeconds > 0 && <div className="muted small">in {duration(b.durationSeconds)}</div>}
                  </td>
                  <td>{b.verifyFailed ? <strong className="danger">failed</strong> : b.verified ? 'yes' : <span className="muted">no</span>}</td>
                  <td>
                    {b.retainedBy.join(', ') || <span className="muted">—</span>}
                    {b.pinned && (
                      <div className="small">
                        pinned{b.pinReason ? `: ${b.pinReason}` : ''}
                        {b.pinExpires ? ` (until ${new Date(b.pinExpires).toLocaleDateString()})` : ''}
                      </div>
                    )}
                  </td>
                  <td>
                    <When at={b.expiresAt} />
                  </td>
                  {operator && <td>{b.phase === 'Succeeded' ? b.pinned ? <UnpinButton backupId={b.id} /> : <PinButton backupId={b.id} /> : null}</td>}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
      {backups && backups.length >= limit && limit < 1000 && (
        <Button className="button" onPress={() => setLimit(Math.min(1000, limit * 4))}>
          Show older backups
        </Button>
      )}
    </section>
  );
}
