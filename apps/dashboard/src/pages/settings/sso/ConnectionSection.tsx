import { useState } from 'react';
import { Form } from 'react-aria-components';
import { BusyButton, Field, FormError, useAction } from '@sigil/web-ui';
import { planRefusal } from '../../../api/plan.ts';
import { unwrap } from '../../../api/rest.ts';
import { useSession } from '../../../app/session.tsx';
import { UpgradeNotice } from '../../../app/UpgradeNotice.tsx';
import { RoleSelect } from '../../members/RoleSelect.tsx';
import type { Role } from '../../members/roles.ts';
import { DEFAULT_ROLES } from './AddConnection.tsx';
import { parseDomains, PROTOCOL_WORDS, protocolOf, sectionId, type SsoConnection } from './connection.ts';
import { ServiceProviderDetails } from './ServiceProviderDetails.tsx';
import { SettingSwitch } from './SettingSwitch.tsx';
import { TestSignIn } from './TestSignIn.tsx';

/** One connection: where it signs in from, a test login, what the IdP needs, and its settings. */
export function ConnectionSection({ connection, onSaved }: { connection: SsoConnection; onSaved: () => void }) {
  const protocol = protocolOf(connection);
  const headingId = sectionId(connection.providerId);
  return (
    <section aria-labelledby={headingId} className="panel stack connection">
      <h2 id={headingId}>
        {connection.providerId} {protocol && <span className="muted">({PROTOCOL_WORDS[protocol]})</span>}
      </h2>
      <IdentityProvider connection={connection} />
      <TestSignIn providerId={connection.providerId} onDone={onSaved} />
      <h3>Give your identity provider these details</h3>
      <ServiceProviderDetails connection={connection} />
      <h3>Settings</h3>
      <ConnectionSettings connection={connection} onSaved={onSaved} />
    </section>
  );
}

function IdentityProvider({ connection }: { connection: SsoConnection }) {
  const rows = protocolOf(connection) === 'oidc'
    ? [
        ['Issuer', connection.issuer],
        ['Client ID', connection.clientId],
        ['Client secret', connection.clientSecretSet ? 'Stored (never shown)' : 'None'],
      ]
    : [
        ['IdP entity ID', connection.idpEntityId],
        ['IdP sign-in URL', connection.idpSsoUrl],
        ['Metadata from', connection.idpMetadataUrl ?? 'Pasted XML'],
      ];
  return (
    <dl className="details">
      {rows.map(([label, value]) => (
        <div key={label} className="contents">
          <dt>{label}</dt>
          <dd>{value ? <code>{value}</code> : <span className="muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}

const FIELDS = ['/body/domains', '/body/enforced', '/body/defaultRole', '/body/jitProvisioning'];

/** Domains, enforcement, default role and just-in-time provisioning, saved together. */
function ConnectionSettings({ connection, onSaved }: { connection: SsoConnection; onSaved: () => void }) {
  const { rest } = useSession();
  const [domains, setDomains] = useState((connection.domains ?? []).join(', '));
  const [enforced, setEnforced] = useState(connection.enforced ?? false);
  const [defaultRole, setDefaultRole] = useState<Role>(connection.defaultRole ?? 'member');
  const [jit, setJit] = useState(connection.jitProvisioning ?? false);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const refusal = planRefusal(action.error);
  return (
    <Form
      aria-label={`Settings of ${connection.providerId}`}
      onSubmit={(e) => {
        e.preventDefault();
        setSaved(false);
        const body = { domains: parseDomains(domains), enforced, defaultRole, jitProvisioning: jit };
        void action
          .run(() => unwrap(rest.PUT('/v1/sso/connections/{providerId}/settings', { params: { path: { providerId: connection.providerId } }, body })))
          .then(() => {
            setSaved(true);
            onSaved();
          }, () => undefined);
      }}
    >
      <Field label="Domains" value={domains} onChange={setDomains} error={action.error} pointer="/body/domains" description="Separated by commas." />
      <SettingSwitch label="Require single sign-on for these domains" description="Members of these domains can no longer sign in with a password (owners keep a way in)." value={enforced} onChange={setEnforced} error={action.error} pointer="/body/enforced" feature="enforcedSso" />
      <RoleSelect label="Role of new members" roles={DEFAULT_ROLES} value={defaultRole} onChange={setDefaultRole} error={action.error} pointer="/body/defaultRole" />
      <SettingSwitch label="Create members on their first sign-in" value={jit} onChange={setJit} error={action.error} pointer="/body/jitProvisioning" />
      {refusal && refusal.feature !== 'enforcedSso' ? <UpgradeNotice refusal={refusal} /> : !refusal && <FormError error={action.error} fields={FIELDS} />}
      <p role="status" className="muted">
        {saved ? 'Settings saved.' : ''}
      </p>
      <div className="row">
        <BusyButton type="submit" className="button button-primary" busy={action.busy}>
          Save settings
        </BusyButton>
      </div>
    </Form>
  );
}
