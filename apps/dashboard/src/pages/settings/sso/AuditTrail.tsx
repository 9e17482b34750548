import { useCallback, useEffect, useRef, useState } from 'react';
import { useQuery } from 'urql';
import { BusyButton, FormError, Loading, StatusBadge, When } from '@sigil/web-ui';
import { useLive } from '../../../api/live.ts';
import { unwrap } from '../../../api/rest.ts';
import { useSession } from '../../../app/session.tsx';
import { graphql } from '../../../gql/index.ts';
import { usePollWhileVisible } from '../../developers/poll.ts';
import type { SsoAuditEvent } from './connection.ts';

const PAGE = 25;
/** The trail has no event on the live stream: its newest page is read again this often while visible. */
const POLL_MS = 10_000;

const ACTION_WORDS: Record<string, string> = {
  'connection.created': 'Connection added',
  'connection.updated': 'Connection changed',
  'connection.deleted': 'Connection deleted',
  'connection.test_succeeded': 'Test sign-in succeeded',
  'connection.test_failed': 'Test sign-in failed',
  'sso.sign_in': 'Signed in with SSO',
  'sso.sign_in_failed': 'SSO sign-in refused',
  'sso.member_provisioned': 'Member created on first sign-in',
  'sso.break_glass_sign_in': 'Owner signed in with a password (SSO required)',
  'scim.token_created': 'SCIM token created',
  'scim.token_revoked': 'SCIM token revoked',
  'scim.user_created': 'SCIM: user created',
  'scim.user_updated': 'SCIM: user changed',
  'scim.user_deactivated': 'SCIM: user deactivated',
  'scim.user_deleted': 'SCIM: user deleted',
  'scim.group_created': 'SCIM: group created',
  'scim.group_updated': 'SCIM: group changed',
  'scim.group_deleted': 'SCIM: group deleted',
};

const MembersQuery = graphql(`
  query SsoAuditMembers {
    organization {
      id
      members {
        id
        user {
          id
          name
        }
      }
    }
  }
`);

interface Entry extends SsoAuditEvent {
  id?: string;
  actor?: { type?: string; id?: string | null };
  subject?: string | null;
  providerId?: string | null;
  outcome?: string;
  reason?: string | null;
}

/** Who did it, in words: a member by name, the identity provider (SCIM, SSO). */
function actorWords(actor: Entry['actor'], names: Map<string, string>): string {
  if (actor?.type === 'scim') return 'Identity provider (SCIM)';
  if (actor?.type === 'sso') return 'Identity provider (SSO)';
  return (actor?.id && names.get(actor.id)) ?? (actor?.id ? 'A former member' : '—');
}

/**
 * The SSO and SCIM audit trail (`GET /v1/sso/audit`), newest first: its newest page is read on open, after a change
 * on this page (`version`), when membership changes and every 10 s while visible; "Load more" adds the next older page.
 */
export function AuditTrail({ version }: { version: number }) {
  const { rest, mode } = useSession();
  const [{ data: members }] = useQuery({ query: MembersQuery });
  const names = new Map((members?.organization?.members ?? []).map((m) => [m.user.id, m.user.name]));
  const [newest, setNewest] = useState<Entry[]>();
  const [older, setOlder] = useState<Entry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [loadingMore, setLoadingMore] = useState(false);
  const olderShown = useRef(false);

  const readNewest = useCallback(() => {
    unwrap(rest.GET('/v1/sso/audit', { params: { query: { limit: PAGE } } })).then(
      (page) => {
        setNewest(page.data as Entry[]);
        // Older pages already shown keep their place; the cursor follows the newest page until one is.
        if (!olderShown.current) setCursor(page.hasMore ? page.nextCursor : null);
        setError(undefined);
      },
      setError,
    );
  }, [rest]);
  useEffect(readNewest, [readNewest, version]);
  usePollWhileVisible(readNewest, POLL_MS);
  // SSO and SCIM sign people in, create and remove them: those changes are on the live stream.
  useLive(readNewest, { mode, types: ['member.'] });

  async function loadMore() {
    if (!cursor) return;
    setLoadingMore(true);
    try {
      const page = await unwrap(rest.GET('/v1/sso/audit', { params: { query: { limit: PAGE, cursor } } }));
      olderShown.current = true;
      setOlder((shown) => [...shown, ...(page.data as Entry[])]);
      setCursor(page.hasMore ? page.nextCursor : null);
    } catch (e) {
      setError(e);
    } finally {
      setLoadingMore(false);
    }
  }

  const seen = new Set<string>();
  const entries = [...(newest ?? []), ...older].filter((e) => !e.id || (!seen.has(e.id) && seen.add(e.id)));
  return (
    <section aria-labelledby="sso-audit" className="stack">
      <h2 id="sso-audit">Audit trail</h2>
      <FormError error={error} />
      {!newest && !error && <Loading what="the audit trail" />}
      {newest && entries.length === 0 && <p className="panel muted">Nothing yet: connection changes, test sign-ins, SSO sign-ins and SCIM changes will show here.</p>}
      {entries.length > 0 && (
        <div className="table-wrap" role="region" aria-label="Audit trail table" tabIndex={0}>
          <table className="table">
            <caption className="visually-hidden">SSO and SCIM audit trail, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">What</th>
                <th scope="col">By</th>
                <th scope="col">Who or what</th>
                <th scope="col">Connection</th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry, i) => (
                <tr key={entry.id ?? i}>
                  <td className="nowrap">
                    <When at={entry.createdAt} />
                  </td>
                  <td>{(entry.action && ACTION_WORDS[entry.action]) ?? entry.action}</td>
                  <td>{actorWords(entry.actor, names)}</td>
                  <td className="cell-subject">{entry.subject ?? <span className="muted">—</span>}</td>
                  <td>{entry.providerId ?? <span className="muted">—</span>}</td>
                  <td>
                    <StatusBadge status={entry.outcome === 'failure' ? 'failed' : 'succeeded'} />
                    {entry.reason && <div className="small">{entry.reason}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <div className="row">
          <BusyButton className="button" busy={loadingMore} busyLabel="Loading…" onPress={() => void loadMore()}>
            Load more
          </BusyButton>
        </div>
      )}
    </section>
  );
}
