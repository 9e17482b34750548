import { useState } from 'react';
import { Form, Switch } from 'react-aria-components';
import type { components } from '@sigil/proto/api/sigil';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { detailFor } from '../developers/fields.tsx';
import { RoleSelect } from '../members/RoleSelect.tsx';
import type { Role } from '../members/roles.ts';
import { ReadState, useRead } from './read.tsx';
import '../developers/developers.css';
import '../members/members.css';
import { BusyButton, FormError, Page, useAction } from '@sigil/web-ui';

type SsoConnection = components['schemas']['SsoConnection'];

export default function Sso() {
  const { rest, can } = useSession();
  const read = useRead(() => unwrap(rest.GET('/v1/sso/connections')), can('sso:manage'));
  return (
    <Page title="Single sign-on" description="Members sign in through your company's identity provider (SAML or OIDC).">
      <ReadState read={read} what="Single sign-on" permission="sso:manage">
        {(list) =>
          list.data.length === 0 ? (
            <p className="muted">No SSO connection is set up for this organization.</p>
          ) : (
            list.data.map((connection) => <ConnectionSettings key={connection.providerId} connection={connection} onSaved={read.reload} />)
          )
        }
      </ReadState>
    </Page>
  );
}

const FIELDS = ['/body/enforced', '/body/defaultRole', '/body/jitProvisioning'];

/** One connection's enforcement, default role and just-in-time provisioning, saved together. */
function ConnectionSettings({ connection, onSaved }: { connection: SsoConnection; onSaved: () => void }) {
  const { rest } = useSession();
  const [enforced, setEnforced] = useState(connection.enforced ?? false);
  const [defaultRole, setDefaultRole] = useState<Role>(connection.defaultRole ?? 'member');
  const [jit, setJit] = useState(connection.jitProvisioning ?? false);
  const action = useAction();
  const headingId = `sso-${connection.providerId}`;
  return (
    <section aria-labelledby={headingId} className="panel">
      <h2 id={headingId}>
        {connection.providerId} {connection.type && <span className="muted">({connection.type.toUpperCase()})</span>}
      </h2>
      <Form
        onSubmit={(e) => {
          e.preventDefault();
          const body = { enforced, defaultRole, jitProvisioning: jit };
          void action
            .run(() => unwrap(rest.PUT('/v1/sso/connections/{providerId}/settings', { params: { path: { providerId: connection.providerId } }, body })))
            .then(onSaved, () => undefined);
        }}
      >
        <SettingSwitch label="Require SSO for members with a matching domain" value={enforced} onChange={setEnforced} error={detailFor(action.error, '/body/enforced')} />
        <RoleSelect label="Role of new members" value={defaultRole} onChange={setDefaultRole} error={action.error} pointer="/body/defaultRole" />
        <SettingSwitch label="Create members on their first SSO sign-in" value={jit} onChange={setJit} error={detailFor(action.error, '/body/jitProvisioning')} />
        <FormError error={action.error} fields={FIELDS} />
        <div className="row">
          <BusyButton type="submit" className="button button-primary" busy={action.busy}>
            Save settings
          </BusyButton>
        </div>
      </Form>
    </section>
  );
}

function SettingSwitch({ label, value, onChange, error }: { label: string; value: boolean; onChange: (value: boolean) => void; error: string | undefined }) {
  return (
    <div className="field">
      <Switch className="switch" isSelected={value} onChange={onChange}>
        <div className="indicator" aria-hidden="true" />
        {label}
      </Switch>
      {error && (
        <p className="react-aria-FieldError" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
