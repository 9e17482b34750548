import { Link } from 'react-aria-components';
import { useQuery } from 'urql';
import { FormError, Loading, Page, StatusBadge, When } from '@sigil/web-ui';
import { useStrataRefetch } from '../../api/events.ts';
import { useSession } from '../../app/session.tsx';
import { duration, formatMoment } from '../../format.ts';
import { refusalOf } from '../../api/graphql-refusal.ts';
import { momentsOf } from './restore-moments.ts';
import { RestoresQuery, type RestoreRow } from './restore-queries.ts';
import { Scroller } from '../../components/Scroller.tsx';
import './restores.css';

const LIMIT = 200;

/** Every restore the caller may see, newest first, running ones included; live from the event stream. */
export default function RestoreList() {
  const { can } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: RestoresQuery, variables: { limit: LIMIT } });
  useStrataRefetch(fetching, refetch, { kinds: ['restore', 'sandbox'] });
  const restores = data?.strataRestores;
  return (
    <Page
      title="Restores"
      description="Every restore, newest first: into sandboxes, new databases, in place, and downloads."
      actions={
        can('restorer') && (
          <Link className="button button-primary" href="/restore">
            New restore
          </Link>
        )
      }
    >
      <FormError error={refusalOf(error)} />
      {!restores && fetching && <Loading what="the restores" />}
      {restores && <RestoreTable restores={restores} canRestore={can('restorer')} />}
    </Page>
  );
}

function RestoreTable({ restores, canRestore }: { restores: readonly RestoreRow[]; canRestore: boolean }) {
  return (
    <Scroller label="Restores" className="rst-list">
      <thead>
        <tr>
          <th scope="col">Restore</th>
          <th scope="col">Target</th>
          <th scope="col">Mode</th>
          <th scope="col">Phase</th>
          <th scope="col">Moment asked / data as of</th>
          <th scope="col">Requested by</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {restores.length === 0 && (
          <tr>
            <td colSpan={7}>No restore yet. {canRestore ? 'Start one with “New restore”.' : 'Restorers start them.'}</td>
          </tr>
        )}
        {restores.map((r) => (
          <RestoreRowView key={`${r.namespace}/${r.name}`} restore={r} />
        ))}
      </tbody>
    </Scroller>
  );
}

function RestoreRowView({ restore: r }: { restore: RestoreRow }) {
  const { asked, effective } = momentsOf(r.plan, r.backup?.time);
  return (
    <tr>
      <th scope="row">
        <Link href={`/restores/${r.namespace}/${r.name}`} className="react-aria-Link rst-name">
          {r.name}
        </Link>
      </th>
      <td className="rst-nowrap">{`${r.target.namespace}/${r.target.name}`}</td>
      <td>
        {r.mode}
        {r.mode === 'sandbox' && r.sandbox && <div className="muted small">{r.sandbox}</div>}
      </td>
      <td>
        <StatusBadge status={r.phase} />
        {r.phase === 'Failed' && r.message && <div className="small rst-clamp">{r.message}</div>}
      </td>
      <td className="rst-moment">
        <MomentAsked restore={r} asked={asked} effective={effective} />
        {effective !== undefined && effective !== asked && <div className={asked !== undefined ? 'rst-differs small' : 'small'}>data as of {formatMoment(effective)}</div>}
      </td>
      <td>{r.requestedBy ? <Email address={r.requestedBy} /> : <span className="muted">—</span>}</td>
      <td className="rst-created">
        <When at={r.created} />
        <div className="muted small">{durationWords(r)}</div>
      </td>
    </tr>
  );
}

/** The moment asked; a restore to latest without change capture has none in its plan, nor one chosen by id. */
function MomentAsked({ restore: r, asked, effective }: { restore: RestoreRow; asked: number | undefined; effective: number | undefined }) {
  if (asked !== undefined) return <>{formatMoment(asked)}</>;
  if (r.source.latest) return <span className="muted">latest</span>;
  return effective !== undefined ? <span className="muted">a backup chosen by id</span> : <>—</>;
}

/** How long it took; a download is ready at once (its link is the result). */
function durationWords(r: RestoreRow): string {
  if (r.durationSeconds > 0) return `took ${duration(r.durationSeconds)}`;
  if (r.phase === 'Running' || r.phase === 'Pending') return 'running';
  return r.phase === 'Succeeded' && r.mode === 'download' ? 'ready at once' : '';
}

/** An e-mail that may wrap after its @ (a narrow column), never inside a word. */
function Email({ address }: { address: string }) {
  const at = address.indexOf('@');
  if (at < 0) return <>{address}</>;
  return (
    <>
      {address.slice(0, at)}
      <wbr />@{address.slice(at + 1)}
    </>
  );
}
