import { useState, type ReactNode } from 'react';
import { Button } from 'react-aria-components';
import { useQuery } from 'urql';
import { useLive } from '../../api/live.ts';
import { unwrap } from '../../api/rest.ts';
import { useAction } from '../../api/useAction.ts';
import { useSession } from '../../app/session.tsx';
import { ConfirmButton, DialogButton } from '../../components/Dialog.tsx';
import { FormError } from '../../components/Form.tsx';
import { Loading, Page, StatusBadge } from '../../components/Page.tsx';
import { graphql } from '../../gql/index.ts';
import type { ApiKeysQuery as ApiKeysData } from '../../gql/graphql.ts';
import { CreateApiKey } from './CreateApiKey.tsx';
import { ShortDate } from './ShortDate.tsx';
import { PERMISSION_WORDS, type Permission } from './words.ts';
import './developers.css';

const ApiKeysQuery = graphql(`
  query ApiKeys($mode: String!, $after: String) {
    organization {
      id
      apiKeys(mode: $mode, first: 25, after: $after) {
        nodes {
          id
          name
          mode
          scopes
          prefix
          createdAt
          expiresAt
          lastUsedAt
          revokedAt
          createdBy
        }
        hasMore
        nextCursor
      }
    }
  }
`);

const CreatorsQuery = graphql(`
  query ApiKeyCreators {
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

type ApiKey = NonNullable<ApiKeysData['organization']>['apiKeys']['nodes'][number];

export default function ApiKeys() {
  const { can, mode, session } = useSession();
  const [generation, setGeneration] = useState(0);
  if (!can('apikey:manage')) {
    return (
      <Page title="API keys" description="Keys let your servers call the Sigil API.">
        <p className="alert alert-info">
          You cannot manage API keys: that needs the <code>apikey:manage</code> permission, which owners and admins of {session?.organization.name} hold.
          Your role is {session?.role}. Ask an owner or an admin to create a key for you.
        </p>
      </Page>
    );
  }
  return (
    <Page
      title="API keys"
      description={`Keys let your servers call the Sigil API. Showing ${mode} keys; switch the mode to see the others.`}
      actions={
        <DialogButton label="Create API key" title="Create API key" variant="button button-primary">
          {(close) => <CreateApiKey close={close} onCreated={() => setGeneration((g) => g + 1)} />}
        </DialogButton>
      }
    >
      {/* A new mode or a new key starts the list again from its first page. */}
      <KeyTable key={`${mode}-${generation}`} mode={mode} />
    </Page>
  );
}

function KeyTable({ mode }: { mode: 'test' | 'live' }) {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [{ data: creators }] = useQuery({ query: CreatorsQuery });
  const names = new Map((creators?.organization?.members ?? []).map((m) => [m.user.id, m.user.name]));
  return (
    <div className="table-wrap">
      <table className="table">
        <caption className="visually-hidden">API keys in {mode} mode, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Scopes</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        {cursors.map((after, index) => (
          <KeyPage key={after ?? 'first'} mode={mode} after={after} names={names} isLast={index === cursors.length - 1} onMore={(next) => setCursors((c) => [...c, next])} />
        ))}
      </table>
    </div>
  );
}

/** One page of keys (25), as a table body; the last page offers the next. */
function KeyPage({ mode, after, names, isLast, onMore }: { mode: 'test' | 'live'; after: string | null; names: Map<string, string>; isLast: boolean; onMore: (cursor: string) => void }) {
  const [{ data, fetching, error }, refetch] = useQuery({ query: ApiKeysQuery, variables: { mode, after } });
  useLive(() => refetch({ requestPolicy: 'network-only' }), { mode, types: ['apikey.'] });
  const page = data?.organization?.apiKeys;
  return (
    <tbody>
      {!page && fetching && <MessageRow><Loading what="API keys" /></MessageRow>}
      {error && <MessageRow><p role="alert" className="error-text">{error.message}</p></MessageRow>}
      {page && page.nodes.length === 0 && after === null && <MessageRow><span className="muted">No {mode} API keys yet. Create one to call the API from your servers.</span></MessageRow>}
      {page?.nodes.map((key) => <KeyRow key={key.id} apiKey={key} createdBy={names.get(key.createdBy)} onRevoked={() => refetch({ requestPolicy: 'network-only' })} />)}
      {isLast && page?.hasMore && page.nextCursor && (
        <MessageRow>
          <Button className="button" onPress={() => onMore(page.nextCursor as string)}>
            Show older keys
          </Button>
        </MessageRow>
      )}
    </tbody>
  );
}

function MessageRow({ children }: { children: ReactNode }) {
  return (
    <tr>
      <td colSpan={8}>{children}</td>
    </tr>
  );
}

function statusOf(key: ApiKey): 'active' | 'revoked' | 'expired' {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && new Date(key.expiresAt) <= new Date()) return 'expired';
  return 'active';
}

function KeyRow({ apiKey, createdBy, onRevoked }: { apiKey: ApiKey; createdBy: string | undefined; onRevoked: () => void }) {
  const { rest } = useSession();
  const revoke = useAction();
  const status = statusOf(apiKey);
  return (
    <tr>
      <th scope="row" className="cell-name">
        {apiKey.name}
        <div className="muted small">by {createdBy ?? 'a former member'}</div>
      </th>
      <td>
        <code>{apiKey.prefix}…</code>
      </td>
      <td>
        <p className="scopes small">{apiKey.scopes.map((scope) => PERMISSION_WORDS[scope as Permission] ?? scope).join(', ')}</p>
      </td>
      <td>
        <StatusBadge status={status} />
      </td>
      <td>
        <ShortDate at={apiKey.createdAt} />
      </td>
      <td>
        <ShortDate at={apiKey.lastUsedAt} />
      </td>
      <td>
        <ShortDate at={apiKey.expiresAt} />
      </td>
      <td>
        {status !== 'revoked' && (
          <ConfirmButton
            label={`Revoke ${apiKey.name}`}
            title={`Revoke ${apiKey.name}?`}
            description={
              <p>
                Requests with <code>{apiKey.prefix}…</code> stop working at once. This cannot be undone.
              </p>
            }
            confirmLabel="Revoke key"
            error={<FormError error={revoke.error} />}
            onConfirm={async () => {
              await revoke.run(() => unwrap(rest.DELETE('/v1/api-keys/{id}', { params: { path: { id: apiKey.id } } })));
              onRevoked();
            }}
          />
        )}
      </td>
    </tr>
  );
}
