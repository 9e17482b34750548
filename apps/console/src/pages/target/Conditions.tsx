import { When } from '@sigil/web-ui';
import { ScrollRegion } from '../../components/Scroller.tsx';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}

/** The BackupTarget resource's status conditions, as `strata get` shows them. */
export function Conditions({ conditions }: { conditions: readonly Condition[] }) {
  return (
    <section aria-labelledby="conditions-heading" className="target-section">
      <h2 id="conditions-heading">Conditions</h2>
      {conditions.length === 0 ? (
        <p className="muted">The resource reports no conditions yet.</p>
      ) : (
        <ScrollRegion label="Conditions">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Condition</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Message</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {conditions.map((c) => (
                <tr key={c.type}>
                  <th scope="row">{c.type}</th>
                  <td>
                    <span className={`badge badge-${c.status === 'True' ? 'ok' : c.status === 'False' ? 'failing' : 'draft'}`}>{c.status}</span>
                  </td>
                  <td>{c.reason}</td>
                  <td>{c.message}</td>
                  <td>
                    <When at={c.lastTransitionTime} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </section>
  );
}
