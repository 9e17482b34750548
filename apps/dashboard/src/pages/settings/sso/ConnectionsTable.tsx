import { StatusBadge } from '@sigil/web-ui';
import { ShortDate } from '../../developers/ShortDate.tsx';
import { certificateExpiresSoon, PROTOCOL_WORDS, protocolOf, sectionId, type SsoConnection } from './connection.ts';

/** Every connection with its health: the last success, the last error, and when the IdP's certificate expires. */
export function ConnectionsTable({ connections }: { connections: SsoConnection[] }) {
  if (connections.length === 0) return <p className="panel muted">No SSO connection yet. Add one to let members sign in through your identity provider.</p>;
  return (
    <div className="table-wrap" role="region" aria-label="SSO connections table" tabIndex={0}>
      <table className="table">
        <caption className="visually-hidden">SSO connections and their health</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Protocol</th>
            <th scope="col">Domains</th>
            <th scope="col">Status</th>
            <th scope="col">Last success</th>
            <th scope="col">Last error</th>
            <th scope="col">Certificate expires</th>
          </tr>
        </thead>
        <tbody>
          {connections.map((connection) => (
            <ConnectionRow key={connection.providerId} connection={connection} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ConnectionRow({ connection }: { connection: SsoConnection }) {
  const protocol = protocolOf(connection);
  const health = connection.health ?? {};
  const certificate = health.certificateExpiresAt;
  return (
    <tr>
      <th scope="row" className="cell-name">
        <a href={`#${sectionId(connection.providerId)}`}>{connection.providerId}</a>
        {connection.enforced && <div className="muted small">Required for its domains</div>}
      </th>
      <td className="nowrap">{protocol ? PROTOCOL_WORDS[protocol] : '—'}</td>
      <td>{connection.domains?.length ? connection.domains.join(', ') : <span className="muted">None</span>}</td>
      <td>{connection.status ? <StatusBadge status={connection.status} /> : '—'}</td>
      <td>
        <ShortDate at={health.lastSuccessAt} empty="Not yet" />
      </td>
      <td>
        {health.lastError ? (
          <>
            <span className="error-text small">{health.lastError}</span>
            {health.lastErrorAt && (
              <div className="muted small">
                <ShortDate at={health.lastErrorAt} />
              </div>
            )}
          </>
        ) : (
          <span className="muted">None</span>
        )}
      </td>
      <td>
        {protocol === 'oidc' ? (
          <span className="muted">Not used</span>
        ) : (
          <>
            <ShortDate at={certificate} empty="Unknown" />
            {certificateExpiresSoon(certificate) && <div className="error-text small">{new Date(certificate as string).getTime() < Date.now() ? 'Expired' : 'Soon: renew it at your IdP'}</div>}
          </>
        )}
      </td>
    </tr>
  );
}
