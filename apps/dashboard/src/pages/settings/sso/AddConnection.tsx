import { useState } from 'react';
import { Button, FieldError, Form, Label, Radio, RadioGroup } from 'react-aria-components';
import { BusyButton, Field, FormError, useAction } from '@sigil/web-ui';
import { planRefusal } from '../../../api/plan.ts';
import { unwrap } from '../../../api/rest.ts';
import { useSession } from '../../../app/session.tsx';
import { UpgradeNotice } from '../../../app/UpgradeNotice.tsx';
import { detailFor } from '../../developers/fields.tsx';
import { RoleSelect } from '../../members/RoleSelect.tsx';
import type { Role } from '../../members/roles.ts';
import { parseDomains, PROTOCOL_WORDS, type Protocol, type SsoConnection } from './connection.ts';
import { MetadataFields, type Metadata } from './MetadataFields.tsx';
import { ServiceProviderDetails } from './ServiceProviderDetails.tsx';
import { SettingSwitch } from './SettingSwitch.tsx';

/** The roles a connection may give new members (an owner is only ever made by another owner). */
export const DEFAULT_ROLES: readonly Role[] = ['member', 'admin', 'viewer'];

const FIELDS = ['/path/providerId', '/body/protocol', '/body/metadataXml', '/body/metadataUrl', '/body/issuer', '/body/clientId', '/body/clientSecret', '/body/domains', '/body/defaultRole', '/body/jitProvisioning', '/body/enforced'];

/** The content of the "Add connection" dialog: the form, then what to give the identity provider. */
export function AddConnection({ close, onSaved }: { close: () => void; onSaved: () => void }) {
  const [saved, setSaved] = useState<SsoConnection>();
  if (saved) {
    return (
      <div className="stack">
        <p className="alert alert-success" role="status">
          <strong>{saved.providerId} is saved.</strong> Give your identity provider these details, then use “Test sign-in”.
        </p>
        <ServiceProviderDetails connection={saved} />
        <div className="dialog-actions">
          <Button className="button button-primary" onPress={close}>
            Done
          </Button>
        </div>
      </div>
    );
  }
  return (
    <ConnectionForm
      close={close}
      onSaved={(connection) => {
        setSaved(connection);
        onSaved();
      }}
    />
  );
}

function ConnectionForm({ close, onSaved }: { close: () => void; onSaved: (connection: SsoConnection) => void }) {
  const { rest } = useSession();
  const [providerId, setProviderId] = useState('');
  const [protocol, setProtocol] = useState<Protocol>('saml');
  const [metadata, setMetadata] = useState<Metadata>({ url: '', xml: '', source: 'url' });
  const [issuer, setIssuer] = useState('');
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [domains, setDomains] = useState('');
  const [defaultRole, setDefaultRole] = useState<Role>('member');
  const [jit, setJit] = useState(true);
  const [enforced, setEnforced] = useState(false);
  const action = useAction();
  const refusal = planRefusal(action.error);

  async function submit() {
    const idp =
      protocol === 'saml'
        ? metadata.source === 'xml' && metadata.xml.trim()
          ? { metadataXml: metadata.xml }
          : { metadataUrl: metadata.url.trim() }
        : { issuer: issuer.trim(), clientId: clientId.trim(), clientSecret };
    const body = { protocol, ...idp, domains: parseDomains(domains), defaultRole, jitProvisioning: jit, enforced };
    const connection = await action
      .run(() => unwrap(rest.PUT('/v1/sso/connections/{providerId}/settings', { params: { path: { providerId } }, body })))
      .catch(() => undefined);
    if (connection) onSaved(connection);
  }

  return (
    <Form
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <Field label="Name" name="providerId" isRequired value={providerId} onChange={setProviderId} error={action.error} pointer="/path/providerId" description="Lower-case letters, digits and hyphens, e.g. “okta”. It is part of the addresses you give the identity provider." autoFocus />
      <RadioGroup className="field radio-field" value={protocol} onChange={(v) => setProtocol(v === 'oidc' ? 'oidc' : 'saml')} isInvalid={detailFor(action.error, '/body/protocol') !== undefined} validationBehavior="aria">
        <Label>Protocol</Label>
        <div className="radio-list">
          {(['saml', 'oidc'] as const).map((p) => (
            <Radio key={p} value={p} className="radio">
              <span className="radio-dot" aria-hidden="true" />
              {PROTOCOL_WORDS[p]}
            </Radio>
          ))}
        </div>
        <FieldError>{detailFor(action.error, '/body/protocol')}</FieldError>
      </RadioGroup>
      {protocol === 'saml' ? (
        <MetadataFields value={metadata} onChange={setMetadata} error={action.error} />
      ) : (
        <>
          <Field label="Issuer URL" name="issuer" type="url" isRequired value={issuer} onChange={setIssuer} error={action.error} pointer="/body/issuer" description="Sigil reads the provider’s discovery document at <issuer>/.well-known/openid-configuration." />
          <Field label="Client ID" name="clientId" isRequired value={clientId} onChange={setClientId} error={action.error} pointer="/body/clientId" />
          <Field label="Client secret" name="clientSecret" type="password" autoComplete="off" isRequired value={clientSecret} onChange={setClientSecret} error={action.error} pointer="/body/clientSecret" description="Stored encrypted; never shown again." />
        </>
      )}
      <Field label="Domains" name="domains" isRequired value={domains} onChange={setDomains} error={action.error} pointer="/body/domains" description="The e-mail domains that sign in through this connection, separated by commas, e.g. example.com, example.org." />
      <RoleSelect label="Role of new members" roles={DEFAULT_ROLES} value={defaultRole} onChange={setDefaultRole} error={action.error} pointer="/body/defaultRole" />
      <SettingSwitch label="Create members on their first sign-in" description="Just-in-time provisioning: someone of these domains who signs in through the identity provider becomes a member with the role above." value={jit} onChange={setJit} error={action.error} pointer="/body/jitProvisioning" />
      <SettingSwitch label="Require single sign-on for these domains" description="Members of these domains can no longer sign in with a password (owners keep a way in)." value={enforced} onChange={setEnforced} error={action.error} pointer="/body/enforced" feature="enforcedSso" />
      {refusal && refusal.feature !== 'enforcedSso' ? <UpgradeNotice refusal={refusal} /> : !refusal && <FormError error={action.error} fields={FIELDS} />}
      <div className="dialog-actions">
        <Button className="button" onPress={close}>
          Cancel
        </Button>
        <BusyButton type="submit" className="button button-primary" busy={action.busy}>
          Save connection
        </BusyButton>
      </div>
    </Form>
  );
}
