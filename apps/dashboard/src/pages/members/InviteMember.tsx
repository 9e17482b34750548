import { useState } from 'react';
import { Button, Form } from 'react-aria-components';
import type { components } from '@sigil/proto/api/sigil';
import { acceptInvitationUrl } from '@sigil/proto/routes';
import { BusyButton, Field, FormError, useAction, When } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { SecretView } from '../developers/SecretView.tsx';
import { RoleSelect } from './RoleSelect.tsx';
import { ROLE_WORDS, type Role } from './roles.ts';

type InvitationCreated = components['schemas']['InvitationCreated'];

/**
 * The "Invite member" dialog: e-mail and role (of `roles`, those the signed-in person may give), then the invitation
 * link, shown this once (accounts e-mails the invitation too, with a link of its own).
 */
export function InviteMember({ close, onInvited, roles }: { close: () => void; onInvited: () => void; roles: Role[] }) {
  const { rest } = useSession();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [created, setCreated] = useState<InvitationCreated>();
  const action = useAction();

  if (created) return <InvitationLink invitation={created} close={close} />;
  return (
    <Form
      onSubmit={(e) => {
        e.preventDefault();
        void action
          .run(() => unwrap(rest.POST('/v1/organization/invitations', { body: { email, role } })))
          .then((invitation) => {
            setCreated(invitation);
            onInvited();
          })
          .catch(() => undefined);
      }}
    >
      <Field label="E-mail" type="email" name="email" autoComplete="off" isRequired value={email} onChange={setEmail} error={action.error} pointer="/body/email" autoFocus />
      <RoleSelect label="Role" value={role} roles={roles} onChange={setRole} error={action.error} description={roles.includes('owner') ? undefined : 'Only an owner can invite another owner.'} />
      <FormError error={action.error} fields={['/body/email', '/body/role']} />
      <div className="dialog-actions">
        <Button className="button" onPress={close}>
          Cancel
        </Button>
        <BusyButton type="submit" className="button button-primary" busy={action.busy}>
          Create invitation
        </BusyButton>
      </div>
    </Form>
  );
}

function InvitationLink({ invitation, close }: { invitation: InvitationCreated; close: () => void }) {
  const link = acceptInvitationUrl(window.location.origin, invitation.token);
  return (
    <div className="stack">
      <p className="alert alert-success" role="status">
        An invitation is on its way to {invitation.email} by e-mail. It lets them join as {ROLE_WORDS[invitation.role].name.toLowerCase()} until{' '}
        <When at={invitation.expiresAt} />.
      </p>
      <p>If the e-mail does not reach them, send them this link yourself. It is shown only once.</p>
      <SecretView label="Invitation link" secret={link} copyLabel="Copy invitation link" />
      <div className="dialog-actions">
        <Button className="button button-primary" onPress={close}>
          Done
        </Button>
      </div>
    </div>
  );
}
