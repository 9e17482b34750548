import { useState } from 'react';
import { useQuery } from 'urql';
import { useLive } from '../../api/live.ts';
import { unwrap } from '../../api/rest.ts';
import { useAction } from '../../api/useAction.ts';
import { useSession } from '../../app/session.tsx';
import { ConfirmButton, DialogButton } from '../../components/Dialog.tsx';
import { FormError } from '../../components/Form.tsx';
import { Loading, Page } from '../../components/Page.tsx';
import { graphql } from '../../gql/index.ts';
import { ShortDate } from '../developers/ShortDate.tsx';
import type { MembersQuery as MembersData } from '../../gql/graphql.ts';
import { Invitations } from './Invitations.tsx';
import { InviteMember } from './InviteMember.tsx';
import { RoleSelect } from './RoleSelect.tsx';
import { isRole, ROLE_WORDS } from './roles.ts';
import '../developers/developers.css';
import './members.css';

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
  const manage = can('member:manage');
  const members = data?.organization?.members ?? [];
  return (
    <Page
      title="Members"
      description={`The people of ${session?.organization.name ?? 'your organization'} and what each may do.`}
      actions={
        manage && (
          <DialogButton label="Invite member" title="Invite a member" variant="button button-primary">
            {(close) => <InviteMember close={close} onInvited={() => setInvited((n) => n + 1)} />}
          </DialogButton>
        )
      }
    >
      {!manage && (
        <p className="alert alert-info">
          You can see who is here, but inviting, changing roles and removing members needs the <code>member:manage</code> permission, which owners and admins
          hold. Your role is {session?.role}.
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
                {manage && (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {members.map((member) => (
                <MemberRow key={member.id} member={member} manage={manage} isYou={member.user.id === session?.user.id} onChanged={refresh} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {manage && <Invitations key={invited} />}
    </Page>
  );
}

function MemberRow({ member, manage, isYou, onChanged }: { member: Member; manage: boolean; isYou: boolean; onChanged: () => void }) {
  const { rest } = useSession();
  const change = useAction();
  const remove = useAction();
  const role = isRole(member.role) ? member.role : 'viewer';
  const path = { params: { path: { id: member.id } } };
  return (
    <tr>
      <th scope="row">
        {member.user.name} {isYou && <span className="you">(you)</span>}
      </th>
      <td>{member.user.email}</td>
      <td>
        {manage ? (
          <RoleSelect
            label={`Role of ${member.user.name}`}
            hideLabel
            value={role}
            isDisabled={change.busy}
            error={change.error}
            onChange={(next) => {
              void change.run(() => unwrap(rest.PATCH('/v1/organization/members/{id}', { ...path, body: { role: next } }))).then(onChanged, () => undefined);
            }}
          />
        ) : (
          ROLE_WORDS[role].name
        )}
        {manage && <FormError error={change.error} fields={['/body/role']} />}
      </td>
      <td>
        <ShortDate at={member.createdAt} />
      </td>
      {manage && (
        <td>
          <ConfirmButton
            label={`Remove ${member.user.name}`}
            title={`Remove ${member.user.name}?`}
            description={<p>{member.user.name} loses access to this organization at once and is signed out of it. You can invite them again later.</p>}
            confirmLabel="Remove member"
            error={<FormError error={remove.error} />}
            onConfirm={async () => {
              await remove.run(() => unwrap(rest.DELETE('/v1/organization/members/{id}', path)));
              onChanged();
            }}
          />
        </td>
      )}
    </tr>
  );
}
