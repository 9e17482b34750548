import { useState } from 'react';
import type { components } from '@sigil/proto/api/sigil';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { SecretView } from '../developers/SecretView.tsx';
import { ReadState, useRead } from './read.tsx';
import '../developers/developers.css';
import { BusyButton, ConfirmButton, CopyButton, FormError, Page, useAction, When } from '@sigil/web-ui';

type ScimState = components['schemas']['ScimState'];

export default function Scim() {
  const { rest, can } = useSession();
  const read = useRead(() => unwrap(rest.GET('/v1/scim')), can('sso:manage'));
  return (
    <Page title="SCIM provisioning" description="Let your identity provider create, update and remove members.">
      <ReadState read={read} what="SCIM provisioning" permission="sso:manage">
        {(scim) => <ScimSettings scim={scim} onChanged={read.reload} />}
      </ReadState>
    </Page>
  );
}

function ScimSettings({ scim, onChanged }: { scim: ScimState; onChanged: () => void }) {
  const { rest } = useSession();
  const action = useAction();
  const [token, setToken] = useState<string>();
  return (
    <section aria-labelledby="scim" className="panel stack">
      <h2 id="scim">Connection</h2>
      <dl className="details">
        <dt>SCIM base URL</dt>
        <dd className="secret-box">
          <code>{scim.endpoint}</code>
          <CopyButton text={scim.endpoint} label="Copy SCIM base URL" />
        </dd>
        <dt>Token</dt>
        <dd>{scim.tokenActive ? <>Active since <When at={scim.tokenCreatedAt} /></> : 'None: provisioning is off'}</dd>
        <dt>Provisioned users</dt>
        <dd>{scim.users?.length ?? 0}</dd>
      </dl>
      {token && (
        <>
          <p className="alert alert-warning" role="note">
            <strong>Copy the token now: it is shown only once.</strong> Paste it into your identity provider's SCIM settings.
          </p>
          <SecretView label="SCIM token" secret={token} copyLabel="Copy SCIM token" />
        </>
      )}
      <div className="row">
        <BusyButton
          className="button button-primary"
          busy={action.busy}
          onPress={async () => {
            const created = await action.run(() => unwrap(rest.POST('/v1/scim/token'))).catch(() => undefined);
            if (created) {
              setToken(created.token);
              onChanged();
            }
          }}
        >
          {scim.tokenActive ? 'Replace token' : 'Create token'}
        </BusyButton>
        {scim.tokenActive && (
          <ConfirmButton
            label="Revoke token"
            title="Revoke the SCIM token?"
            description={<p>Your identity provider can no longer provision members until you create a new token.</p>}
            confirmLabel="Revoke token"
            error={<FormError error={action.error} />}
            onConfirm={async () => {
              await action.run(() => unwrap(rest.DELETE('/v1/scim/token')));
              setToken(undefined);
              onChanged();
            }}
          />
        )}
      </div>
      <FormError error={action.error} />
    </section>
  );
}
