import { useState } from 'react';
import type { components } from '@sigil/proto/api/strata';
import { BusyButton, CopyButton, FormError, useAction } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import type { Sandbox } from './detail-query.ts';

type SandboxCredentials = components['schemas']['SandboxCredentials'];

/**
 * How to reach the sandbox's server: the `strata connect` line when it is exposed, and its credentials, read only when
 * asked for (`GET /sandboxes/{name}/credentials` is recorded in the audit log, and the page says so).
 */
export function Connect({ sandbox }: { sandbox: Pick<Sandbox, 'name' | 'connect'> }) {
  return (
    <section aria-labelledby="sbx-connect" className="sbx-panel">
      <h2 id="sbx-connect">Connect</h2>
      {sandbox.connect ? (
        <>
          <p>Open a local port forwarded to this sandbox through the gateway, then connect to it with the credentials below:</p>
          <div className="secret">
            <code>{sandbox.connect}</code>
            <CopyButton text={sandbox.connect} label="Copy command" />
          </div>
        </>
      ) : (
        <p className="muted">
          No <code>strata connect</code> line: the sandbox was not created exposed, or its server is not up.
        </p>
      )}
      <Credentials name={sandbox.name} />
    </section>
  );
}

function Credentials({ name }: { name: string }) {
  const { rest } = useSession();
  const reveal = useAction();
  const [credentials, setCredentials] = useState<SandboxCredentials>();
  const read = async () => {
    const answer = await reveal.run(() => unwrap(rest.GET('/sandboxes/{name}/credentials', { params: { path: { name } } }))).catch(() => undefined);
    if (answer) setCredentials(answer);
  };
  return (
    <div className="sbx-credentials">
      <h3>Credentials</h3>
      <p className="alert alert-info">Revealing the credentials is recorded in the audit log, with your name and the time.</p>
      {/* One button that stays in place (reveal, then hide), so keyboard focus is not lost when the list appears. */}
      <BusyButton className="button" busy={reveal.busy} busyLabel="Revealing…" onPress={credentials ? () => setCredentials(undefined) : read}>
        {credentials ? 'Hide credentials' : 'Reveal credentials'}
      </BusyButton>
      <FormError error={reveal.error} />
      {credentials && <CredentialList credentials={credentials} />}
    </div>
  );
}

function CredentialList({ credentials: c }: { credentials: SandboxCredentials }) {
  const items: [string, string | undefined][] = [
    ['Host', c.host],
    ['Port', c.port === undefined ? undefined : String(c.port)],
    ['Database', c.database],
    ['User name', c.username],
    ['Password', c.password],
  ];
  return (
    <dl className="sbx-secrets">
      {items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>
            <code>{value || '—'}</code>
            {value && <CopyButton text={value} label={`Copy ${label.toLowerCase()}`} />}
          </dd>
        </div>
      ))}
    </dl>
  );
}
