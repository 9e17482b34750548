import { useState } from 'react';
import { Button } from 'react-aria-components';
import type { components } from '@sigil/proto/api/sigil';
import { BusyButton, ConfirmButton, CopyButton, FormError, Page, StatusBadge, useAction, When } from '@sigil/web-ui';
import { useLive } from '../../api/live.ts';
import { planRefusal } from '../../api/plan.ts';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { UpgradeNotice } from '../../app/UpgradeNotice.tsx';
import { SecretView } from '../developers/SecretView.tsx';
import { ShortDate } from '../developers/ShortDate.tsx';
import { ROLE_WORDS, isRole } from '../members/roles.ts';
import { lacks, NotOnPlan, useOrganizationFeatures } from './features.tsx';
import { ReadState, useRead } from './read.tsx';
import '../developers/developers.css';
import './sso/sso.css';

type ScimState = components['schemas']['ScimState'];

/** The token's state, in the API's two spellings (`token: {...}` and the flat `tokenActive`, `tokenCreatedAt`). */
interface TokenState {
  active: boolean;
  createdAt?: string | null;
  lastUsedAt?: string | null;
}

/** A provisioned user as `GET /v1/scim` lists them. */
interface ProvisionedUser {
  id: string;
  userName?: string;
  email?: string;
  name?: string;
  active?: boolean;
  role?: string | null;
  groups?: string[];
  lastProvisionedAt?: string;
}

function tokenOf(scim: ScimState): TokenState {
  const token = scim.token as Partial<TokenState> | undefined;
  return { active: token?.active ?? scim.tokenActive, createdAt: token?.createdAt ?? scim.tokenCreatedAt, lastUsedAt: token?.lastUsedAt };
}

/**
 * The SCIM endpoint, its token and the provisioned users: read again when membership changes (the identity provider
 * adds or removes someone: `member.*` on the live stream), and every 30 s while visible for the rest.
 */
export default function Scim() {
  const { rest, can, mode } = useSession();
  const read = useRead(() => unwrap(rest.GET('/v1/scim')), can('sso:manage'));
  useLive(read.reload, { mode, types: ['member.'] });
  const features = useOrganizationFeatures();
  return (
    <Page title="SCIM provisioning" description="Let your identity provider create, update and remove members (SCIM 2.0).">
      <div className="stack">
        {lacks(features, 'scim') && <NotOnPlan what="SCIM provisioning" />}
        <ReadState read={read} what="SCIM provisioning" permission="sso:manage">
          {(scim) => (
            <>
              <ScimConnection scim={scim} onChanged={read.reload} />
              <ProvisionedUsers users={(scim.users ?? []) as unknown as ProvisionedUser[]} />
            </>
          )}
        </ReadState>
      </div>
    </Page>
  );
}

/** The endpoint and the token: generate (or replace, after a confirmation) shows it once; revoke stops provisioning. */
function ScimConnection({ scim, onChanged }: { scim: ScimState; onChanged: () => void }) {
  const { rest } = useSession();
  const action = useAction();
  const [token, setToken] = useState<string>();
  const state = tokenOf(scim);
  const refusal = planRefusal(action.error);

  async function generate() {
    const created = await action.run(() => unwrap(rest.POST('/v1/scim/token')));
    setToken(created.token);
    onChanged();
  }

  const error = refusal ? <UpgradeNotice refusal={refusal} /> : <FormError error={action.error} />;
  return (
    <section aria-labelledby="scim-connection" className="panel stack">
      <h2 id="scim-connection">Connection</h2>
      <dl className="details">
        <dt>SCIM base URL</dt>
        <dd className="secret-box">
          <code>{scim.endpoint}</code>
          <CopyButton text={scim.endpoint} label="Copy SCIM base URL" />
        </dd>
        <dt>Token</dt>
        <dd>{state.active ? <StatusBadge status="active" /> : <span className="muted">None: provisioning is off</span>}</dd>
        {state.active && (
          <>
            <dt>Created</dt>
            <dd>
              <When at={state.createdAt} />
            </dd>
            <dt>Last used</dt>
            <dd>{state.lastUsedAt ? <When at={state.lastUsedAt} /> : <span className="muted">Never</span>}</dd>
          </>
        )}
      </dl>
      {token && (
        <>
          <p className="alert alert-warning" role="note">
            <strong>Copy the token now: it is shown only once.</strong> Sigil keeps only its hash. Paste it into your identity provider's SCIM settings as the bearer token.
          </p>
          <SecretView label="SCIM token" secret={token} copyLabel="Copy SCIM token" />
          <div className="row">
            <Button className="button" onPress={() => setToken(undefined)}>
              I have copied it
            </Button>
          </div>
        </>
      )}
      <div className="row">
        {state.active ? (
          <ConfirmButton
            label="Replace token"
            title="Replace the SCIM token?"
            description={<p>The current token stops working at once: your identity provider cannot provision members until you give it the new one.</p>}
            confirmLabel="Replace token"
            error={error}
            onConfirm={generate}
          />
        ) : (
          <BusyButton className="button button-primary" busy={action.busy} onPress={() => void generate().catch(() => undefined)}>
            Generate token
          </BusyButton>
        )}
        {state.active && (
          <ConfirmButton
            label="Revoke token"
            title="Revoke the SCIM token?"
            description={<p>Your identity provider can no longer provision members until you generate a new token. Members already provisioned stay.</p>}
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
      {!state.active && error}
    </section>
  );
}

function ProvisionedUsers({ users }: { users: ProvisionedUser[] }) {
  return (
    <section aria-labelledby="scim-users" className="stack">
      <h2 id="scim-users">Provisioned users</h2>
      {users.length === 0 ? (
        <p className="panel muted">Nobody yet: the users your identity provider sends show here.</p>
      ) : (
        <div className="table-wrap" role="region" aria-label="Provisioned users table" tabIndex={0}>
          <table className="table">
            <caption className="visually-hidden">Users your identity provider provisioned, most recently changed first</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">User name</th>
                <th scope="col">Status</th>
                <th scope="col">Role</th>
                <th scope="col">Groups</th>
                <th scope="col">Last change</th>
              </tr>
            </thead>
            <tbody>
              {users.map((user) => (
                <tr key={user.id}>
                  <th scope="row" className="cell-name">
                    {user.name || user.email || user.userName}
                    {user.email && user.email !== user.name && <div className="muted small">{user.email}</div>}
                  </th>
                  <td className="cell-subject">{user.userName}</td>
                  <td>
                    <StatusBadge status={user.active === false ? 'deactivated' : 'active'} />
                  </td>
                  <td>{isRole(user.role) ? ROLE_WORDS[user.role].name : <span className="muted">No access</span>}</td>
                  <td>{user.groups?.length ? user.groups.join(', ') : <span className="muted">None</span>}</td>
                  <td>
                    <ShortDate at={user.lastProvisionedAt} empty="—" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
