import { useMemo } from 'react';
import { Button, Link } from 'react-aria-components';
import { useLocation, useNavigate, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { useLiveRefetch } from '../../api/live.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql/index.ts';
import { EnvelopeTable } from './EnvelopeTable.tsx';
import { ListFilters } from './ListFilters.tsx';
import { filtersFrom, hasFilters, searchOf, type EnvelopeFilters } from './listParams.ts';
import { daysAgo, ENVELOPE_CHANGES } from './status.ts';
import './envelopes.css';
import { Loading, Page } from '@sigil/web-ui';

const PAGE_SIZE = 25;

const EnvelopeListQuery = graphql(`
  query EnvelopeList($first: Int!, $after: String, $status: String, $seal: String, $template: ID, $q: String, $testMode: Boolean, $waitingSince: String) {
    envelopes(first: $first, after: $after, status: $status, seal: $seal, template: $template, q: $q, testMode: $testMode, waitingSince: $waitingSince) {
      nodes {
        ...EnvelopeRow
      }
      hasMore
      nextCursor
    }
  }
`);

/** The cursors of the pages before this one (router state: Back and Forward keep them), so "Previous page" works. */
interface PagingState {
  trail?: string[];
}

export default function EnvelopeList() {
  const { mode } = useSession();
  const [params] = useSearchParams();
  const location = useLocation();
  const navigate = useNavigate();
  const filters = useMemo(() => filtersFrom(params), [params]);
  const after = params.get('after') ?? undefined;
  const trail = (location.state as PagingState | null)?.trail ?? [];
  const waitingSince = useMemo(() => (filters.waitingDays ? daysAgo(filters.waitingDays) : undefined), [filters.waitingDays]);
  const [{ data, fetching, error }, refetch] = useQuery({
    query: EnvelopeListQuery,
    variables: { first: PAGE_SIZE, after, status: filters.status, seal: filters.seal, template: filters.template, q: filters.q, testMode: mode === 'test', waitingSince },
  });
  useLiveRefetch(fetching, refetch, { mode, types: ENVELOPE_CHANGES });

  const applyFilters = (next: EnvelopeFilters) => navigate({ search: searchOf(next) }, { replace: true });
  const page = data?.envelopes;
  const goTo = (cursor: string | undefined, nextTrail: string[]) => {
    navigate({ search: searchOf(filters, cursor) }, { state: { trail: nextTrail } satisfies PagingState });
    document.getElementById('envelope-results')?.focus();
  };

  return (
    <Page
      title="Envelopes"
      description={`Every envelope of your organization in ${mode} mode, newest first.`}
      actions={
        <Link href="/envelopes/new" className="button button-primary">
          Send an envelope
        </Link>
      }
    >
      <ListFilters filters={filters} onChange={applyFilters} />
      <section aria-labelledby="envelope-results" className="env-results">
        <h2 id="envelope-results" tabIndex={-1}>
          {hasFilters(filters) ? 'Matching envelopes' : 'All envelopes'}
          {after && <span className="muted"> · {trail.length > 0 ? `page ${trail.length + 1}` : 'a later page'}</span>}
        </h2>
        {fetching && !data && <Loading what="envelopes" />}
        {error && <p role="alert" className="alert alert-error">{error.message}</p>}
        {page && page.nodes.length === 0 && (
          <p className="muted" role="status">
            {hasFilters(filters) ? 'No envelope matches these filters.' : `No envelopes yet in ${mode} mode.`}
          </p>
        )}
        {page && page.nodes.length > 0 && <EnvelopeTable envelopes={page.nodes} caption="Envelopes, newest first" />}
        <nav aria-label="Pages of envelopes" className="env-pager">
          {after && trail.length > 0 && (
            <Button className="button" onPress={() => goTo(trail.at(-1) || undefined, trail.slice(0, -1))}>
              Previous page
            </Button>
          )}
          {after && trail.length === 0 && (
            <Button className="button" onPress={() => goTo(undefined, [])}>
              First page
            </Button>
          )}
          {page?.hasMore && page.nextCursor && (
            <Button className="button" onPress={() => goTo(page.nextCursor ?? undefined, [...trail, after ?? ''])}>
              Next page
            </Button>
          )}
        </nav>
      </section>
    </Page>
  );
}
