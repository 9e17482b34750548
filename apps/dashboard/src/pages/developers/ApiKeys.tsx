import { useState } from 'react';
import { useQuery } from 'urql';
import { useLive } from '../../api/live.ts';
import { unwrap } from '../../api/rest.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import type { ApiKeysQuery as ApiKeysData } from '../../gql/graphql.ts';
import { CreateApiKey } from './CreateApiKey.tsx';
import { ShortDate } from './ShortDate.tsx';
import { PERMISSION_WORDS, type Permission } from './words.ts';
import './developers.css';
import { ConfirmButton, DialogButton, FormError, Page, PagedBodies, PagedRows, StatusBadge, type PageSlot, useAction } from '@sigil/web-ui';

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
        <PagedBodies>{(slot) => <KeyPage mode={mode} slot={slot} names={names} />}</PagedBodies>
      </table>
    </div>
  );
}

/** One page of keys (25), as a table body; the last page offers the next. */
function KeyPage({ mode, slot, names }: { mode: 'test' | 'live'; slot: PageSlot; names: Map<string, string> }) {
  const [{ data, fetching, error }, refetch] = useQuery({ query: ApiKeysQuery, variables: { mode, after: slot.after } });
  const refresh = () => refetch({ requestPolicy: 'network-only' });
  useLive(refresh, { mode, types: ['apikey.'] });
  return (
    <PagedRows
      slot={slot}
      page={data?.organization?.apiKeys}
      fetching={fetching}
      error={error}
      columns={8}
      what="API keys"
      empty={<span className="muted">No {mode} API keys yet. Create one to call the API from your servers.</span>}
      olderLabel="Show older keys"
    >
      {(key) => <KeyRow apiKey={key} createdBy={names.get(key.createdBy)} onRevoked={refresh} />}
    </PagedRows>
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
