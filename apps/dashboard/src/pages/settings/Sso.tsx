import { useCallback, useState } from 'react';
import { DialogButton, Page } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { AddConnection } from './sso/AddConnection.tsx';
import { AuditTrail } from './sso/AuditTrail.tsx';
import { ConnectionSection } from './sso/ConnectionSection.tsx';
import { ConnectionsTable } from './sso/ConnectionsTable.tsx';
import { lacks, NotOnPlan, useOrganizationFeatures } from './features.tsx';
import { ReadState, useRead } from './read.tsx';
import '../developers/developers.css';
import '../members/members.css';
import './sso/sso.css';

const DESCRIPTION = "Members sign in through your company's identity provider (SAML 2.0 or OpenID Connect).";

/**
 * The organization's SSO connections: their health in a table, one section each (test sign-in, what to give the
 * identity provider, settings), "Add connection", and the SSO and SCIM audit trail.
 */
export default function Sso() {
  const { rest, can } = useSession();
  const allowed = can('sso:manage');
  const read = useRead(() => unwrap(rest.GET('/v1/sso/connections')), allowed);
  const features = useOrganizationFeatures();
  // Every change made here is in the trail: it is read again after each.
  const [changes, setChanges] = useState(0);
  const reload = read.reload;
  const changed = useCallback(() => {
    reload();
    setChanges((n) => n + 1);
  }, [reload]);
  return (
    <Page
      title="Single sign-on"
      description={DESCRIPTION}
      actions={
        allowed && (
          <DialogButton label="Add connection" title="Add an SSO connection" variant="button button-primary">
            {(close) => <AddConnection close={close} onSaved={changed} />}
          </DialogButton>
        )
      }
    >
      <ReadState read={read} what="Single sign-on" permission="sso:manage">
        {(list) => (
          <div className="stack">
            {lacks(features, 'ssoConnections') && <NotOnPlan what="Single sign-on" />}
            <ConnectionsTable connections={list.data} />
            {list.data.map((connection) => (
              <ConnectionSection key={connection.providerId} connection={connection} onSaved={changed} />
            ))}
          </div>
        )}
      </ReadState>
      {allowed && <AuditTrail version={changes} />}
    </Page>
  );
}
