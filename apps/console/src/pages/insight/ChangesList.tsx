import { FormError, Loading } from '@sigil/web-ui';
import { unwrap, type RestClient } from '../../api/rest.ts';
import { useRead } from '../../api/useRead.ts';
import { useSession } from '../../app/session.tsx';
import { SegmentsTable } from './SegmentsTable.tsx';

/** The change summaries of a target between two times (RFC 3339; `until` absent: up to now), per segment. */
function readChanges(rest: RestClient, namespace: string, name: string, since: string, until: string | undefined) {
  return unwrap(rest.GET('/targets/{ns}/{name}/changes', { params: { path: { ns: namespace, name }, query: { since, ...(until ? { until } : {}) } } }));
}

/** What each change-log segment of a target did between two times, read from the console API; its refusal shown. */
export function ChangesList({ namespace, name, since, until, label }: { namespace: string; name: string; since: string; until?: string; label: string }) {
  const { rest, can } = useSession();
  const changes = useRead(() => readChanges(rest, namespace, name, since, until), [namespace, name, since, until]);
  return (
    <>
      <FormError error={changes.error} />
      {changes.loading && !changes.data && <Loading what="the changes" />}
      {changes.data && <SegmentsTable segments={changes.data.segments ?? []} label={label} links={{ namespace, name, since, until, mayReadRows: can('restorer') }} />}
    </>
  );
}
