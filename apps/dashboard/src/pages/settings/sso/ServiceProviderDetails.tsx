import { CopyButton } from '@sigil/web-ui';
import { serviceProviderDetails, type SsoConnection } from './connection.ts';

/** What to enter at the identity provider for this connection, each with its copy button. */
export function ServiceProviderDetails({ connection }: { connection: SsoConnection }) {
  const details = serviceProviderDetails(connection);
  if (details.length === 0) return null;
  return (
    <dl className="details sp-details">
      {details.map(({ label, value }) => (
        <div key={label} className="contents">
          <dt>{label}</dt>
          <dd className="secret-box">
            <code>{value}</code>
            <CopyButton text={value} label={`Copy ${label.replace(/ \(.*\)$/, '')}`} />
          </dd>
        </div>
      ))}
    </dl>
  );
}
