import { useQuery } from 'urql';
import { ConfirmButton, FormError, PagedBodies, PagedRows, type PageSlot, useAction } from '@sigil/web-ui';
import { useLive } from '../../api/live.ts';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import { ShortDate } from '../developers/ShortDate.tsx';
import { usePollWhileVisible } from '../developers/poll.ts';
import { isRole, ROLE_WORDS } from './roles.ts';

const InvitationsQuery = graphql(`
  query Invitations($after: String) {
    organization {
      id
      invitations(first: 25, after: $after) {
        nodes {
          id
          email
          role
          expiresAt
          createdAt
        }
        hasMore
        nextCursor
      }
    }
  }
`);

/** Invitations have no domain event (an accepted one has: member.added); the list is read again this often while visible. */
const POLL_MS = 15_000;

/** Pending invitations (not accepted, revoked or expired), newest first, each revocable. */
export function Invitations() {
  return (
    <section aria-labelledby="invitations">
      <h2 id="invitations">Pending invitations</h2>
      <div className="table-wrap">
        <table className="table">
          <caption className="visually-hidden">Pending invitations, newest first</caption>
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Invited</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <PagedBodies>{(slot) => <InvitationPage slot={slot} />}</PagedBodies>
        </table>
      </div>
    </section>
  );
}

function InvitationPage({ slot }: { slot: PageSlot }) {
  const { mode, rest } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: InvitationsQuery, variables: { after: slot.after } });
  const refresh = () => refetch({ requestPolicy: 'network-only' });
  useLive(refresh, { mode, types: ['member.added'] });
  usePollWhileVisible(refresh, POLL_MS);
  const revoke = useAction();
  return (
    <PagedRows
      slot={slot}
      page={data?.organization?.invitations}
      fetching={fetching}
      error={error}
      columns={5}
      what="invitations"
      empty={<span className="muted">No pending invitations.</span>}
      olderLabel="Show older invitations"
    >
      {(invitation) => (
        <tr>
          <th scope="row">{invitation.email}</th>
          <td>{isRole(invitation.role) ? ROLE_WORDS[invitation.role].name : invitation.role}</td>
          <td>
            <ShortDate at={invitation.createdAt} />
          </td>
          <td>
            <ShortDate at={invitation.expiresAt} />
          </td>
          <td>
            <ConfirmButton
              label={`Revoke invitation of ${invitation.email}`}
              title={`Revoke the invitation of ${invitation.email}?`}
              description={<p>The link stops working at once. You can invite {invitation.email} again later.</p>}
              confirmLabel="Revoke invitation"
              error={<FormError error={revoke.error} />}
              onConfirm={async () => {
                await revoke.run(() => unwrap(rest.DELETE('/v1/organization/invitations/{id}', { params: { path: { id: invitation.id } } })));
                refresh();
              }}
            />
          </td>
        </tr>
      )}
    </PagedRows>
  );
}
