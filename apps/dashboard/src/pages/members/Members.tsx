import { useState } from 'react';
import { useQuery } from 'urql';
import { useLive } from '../../api/live.ts';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import { ShortDate } from '../developers/ShortDate.tsx';
import type { MembersQuery as MembersData } from '../../gql/graphql.ts';
import { Invitations } from './Invitations.tsx';
import { InviteMember } from './InviteMember.tsx';
import { grantableRoles, memberActions, type Manager } from './access.ts';
import { RoleSelect } from './RoleSelect.tsx';
import { isRole, ROLE_WORDS } from './roles.ts';
import '../developers/developers.css';
import './members.css';
import { ConfirmButton, DialogButton, FormError, Loading, Page, useAction } from '@sigil/web-ui';

const MembersQuery = graphql(`
  query Members {
    organization {
      id
      name
      members {
        id
        role
        createdAt
        user {
          id
          name
          email
        }
      }
    }
  }
`);

type Member = NonNullable<MembersData['organization']>['members'][number];

export default function Members() {
  const { can, mode, session } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: MembersQuery });
  const [invited, setInvited] = useState(0);
  const refresh = () => refetch({ requestPolicy: 'network-only' });
  useLive(refresh, { mode, types: ['member.'] });
  const manager: Manager = { role: session?.role, manage: can('member:manage') };
  const members = data?.organization?.members ?? [];
  return (
    <Page
      title="Members"
      description={`The people of ${session?.organization.name ?? 'your organization'} and what each may do.`}
      actions={
        manager.manage && (
          <DialogButton label="Invite member" title="Invite a member" variant="button button-primary">
            {(close) => <InviteMember close={close} roles={grantableRoles(manager)} onInvited={() => setInvited((n) => n + 1)} />}
          </DialogButton>
        )
      }
    >
      {!manager.manage && (
        <p className="alert alert-info">
          You can see who is here, but inviting, changing roles and removing members needs the <code>member:manage</code> permission, which owners and admins
          hold. Your role is {session?.role}. To leave {session?.organization.name ?? 'the organization'}, ask an owner or an admin to remove you.
        </p>
      )}
      {fetching && !data && <Loading what="members" />}
      {error && <p role="alert">{error.message}</p>}
      {data && (
        <div className="table-wrap">
          <table className="table">
            <caption className="visually-hidden">Members, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                {manager.manage && (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {members.map((member) => (
                <MemberRow key={member.id} member={member} manager={manager} isYou={member.user.id === session?.user.id} onChanged={refresh} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {manager.manage && <Invitations key={invited} />}
    </Page>
  );
}

/** A member, with what the signed-in person may do to them (memberActions: the API's rules). */
function MemberRow({ member, manager, isYou, onChanged }: { member: Member; manager: Manager; isYou: boolean; onChanged: () => void }) {
  const { rest } = useSession();
  const change = useAction();
  const role = isRole(member.role) ? member.role : 'viewer';
  const { roles, removal } = memberActions(manager, role, isYou);
  return (
    <tr>
      <th scope="row">
        {member.user.name} {isYou && <span className="you">(you)</span>}
      </th>
      <td>{member.user.email}</td>
      <td>
        {roles.length > 0 ? (
          <>
            <RoleSelect
              label={`Role of ${member.user.name}`}
              hideLabel
              value={role}
              roles={roles}
              isDisabled={change.busy}
              error={change.error}
              onChange={(next) => {
                void change.run(() => unwrap(rest.PATCH('/v1/organization/members/{id}', { params: { path: { id: member.id } }, body: { role: next } }))).then(onChanged, () => undefined);
              }}
            />
            <FormError error={change.error} fields={['/body/role']} />
          </>
        ) : (
          ROLE_WORDS[role].name
        )}
      </td>
      <td>
        <ShortDate at={member.createdAt} />
      </td>
      {manager.manage && <td>{removal && <RemoveMember member={member} removal={removal} onRemoved={onChanged} />}</td>}
    </tr>
  );
}

/**
 * Remove a member, or leave (remove yourself: your session in this organization ends, so the app signs you out of it).
 * A refusal (the last owner, say) shows the API's own words in the dialog, beside its button.
 */
function RemoveMember({ member, removal, onRemoved }: { member: Member; removal: 'leave' | 'remove'; onRemoved: () => void }) {
  const { rest, reload, session } = useSession();
  const remove = useAction();
  const organization = session?.organization.name ?? 'this organization';
  const name = member.user.name;
  const words =
    removal === 'leave'
      ? { label: `Leave ${organization}`, title: `Leave ${organization}?`, description: `You lose access to ${organization} at once and are signed out of it. An owner or an admin can invite you again.`, confirm: 'Leave organization' }
      : { label: `Remove ${name}`, title: `Remove ${name}?`, description: `${name} loses access to this organization at once and is signed out of it. You can invite them again later.`, confirm: 'Remove member' };
  return (
    <ConfirmButton
      label={words.label}
      title={words.title}
      description={<p>{words.description}</p>}
      confirmLabel={words.confirm}
      error={<FormError error={remove.error} />}
      onConfirm={async () => {
        await remove.run(() => unwrap(rest.DELETE('/v1/organization/members/{id}', { params: { path: { id: member.id } } })));
        if (removal === 'leave') await reload();
        else onRemoved();
      }}
    />
  );
}
