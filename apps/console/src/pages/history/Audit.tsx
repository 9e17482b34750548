import { useMemo } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { FormError, Loading, Page } from '@sigil/web-ui';
import { useStrataRefetch } from '../../api/events.ts';
import { useSession } from '../../app/session.tsx';
import { graphql } from '../../gql';
import { AuditFilters, auditFiltersFrom, auditSearchOf } from './AuditFilters.tsx';
import { AuditTable } from './AuditTable.tsx';
import { refusalOf } from '../../api/graphql-refusal.ts';
import './history.css';

const AuditQuery = graphql(`
  query ConsoleAudit($action: String, $user: String, $limit: Int) {
    strataAudit(action: $action, user: $user, limit: $limit) {
      time
      user
      role
      action
      target
      object
      outcome
      from
      detail
    }
  }
`);

/**
 * Every write to the console API, whatever its outcome, newest first (role operator): filtered by action and user
 * (in the URL). Writes move the catalog, so the page reads again on its events.
 */
export default function Audit() {
  const { can } = useSession();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const filters = useMemo(() => auditFiltersFrom(params), [params]);
  const [{ data, fetching, error }, refetch] = useQuery({ query: AuditQuery, variables: filters });
  useStrataRefetch(fetching, refetch);
  const events = data?.strataAudit;
  return (
    <Page title="Audit log" description="Every write to the console API by anyone, whatever its outcome, newest first (the events this replica recorded).">
      {can('operator') && <AuditFilters filters={filters} onChange={(next) => navigate({ search: auditSearchOf(next) }, { replace: true })} />}
      <FormError error={refusalOf(error)} />
      {!events && fetching && <Loading what="the audit log" />}
      {events && <AuditTable events={events} filtered={Boolean(filters.action || filters.user)} />}
    </Page>
  );
}
