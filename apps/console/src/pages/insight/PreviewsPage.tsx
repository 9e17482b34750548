import { Link } from 'react-aria-components';
import { useParams, useSearchParams } from 'react-router';
import { ApiError, FormError, Loading, Page } from '@sigil/web-ui';
import { unwrap } from '../../api/rest.ts';
import { useRead } from '../../api/useRead.ts';
import { useSession } from '../../app/session.tsx';
import { count } from '../../format.ts';
import { PreviewValue, TablePreviewsSection } from './PreviewTables.tsx';
import { MASKED, rowCount, tablePreviewsOf } from './previews-model.ts';
import './insight.css';

/** The API's 404 says why a segment has no previews (previews off, the engine, the mover's error): the page's answer, not a failure. */
const noPreviews = (error: unknown): error is ApiError => error instanceof ApiError && error.problem.status === 404;

/**
 * The masked sample rows of one change-log segment (/targets/:ns/:name/segments/:segment/previews), per table: a
 * few inserted, updated and deleted rows, masked by the mover before they were stored. `?since=&until=` are the
 * changes the person came from, for the way back.
 */
export default function PreviewsPage() {
  const { ns = '', name = '', segment = '' } = useParams();
  const [search] = useSearchParams();
  const { rest } = useSession();
  const read = useRead(() => unwrap(rest.GET('/targets/{ns}/{name}/segments/{segment}/previews', { params: { path: { ns, name, segment } } })), [ns, name, segment]);
  const target = `/targets/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
  const back = new URLSearchParams([...search].filter(([key]) => key === 'since' || key === 'until')).toString();
  return (
    <Page
      title="Sample rows"
      description={
        <>
          {ns}/{name}, change-log segment <code>{segment}</code>
        </>
      }
    >
      <nav aria-label="Breadcrumb" className="insight-crumbs">
        <ol>
          <li>
            <Link href={target}>
              {ns}/{name}
            </Link>
          </li>
          <li>
            <Link href={`${target}/changes${back ? `?${back}` : ''}`}>Changes</Link>
          </li>
          <li aria-current="page">Sample rows</li>
        </ol>
      </nav>
      {noPreviews(read.error) ? (
        <section aria-labelledby="previews-none" className="target-section">
          <h2 id="previews-none">No sample rows for this segment</h2>
          <p>{read.error.problem.detail ?? read.error.problem.title}</p>
        </section>
      ) : (
        <FormError error={read.error} />
      )}
      {read.loading && !read.data && <Loading what="the sample rows" />}
      {read.data && <PreviewsView tables={read.data.previews?.tables} />}
    </Page>
  );
}

function PreviewsView({ tables: raw }: { tables: unknown }) {
  const tables = tablePreviewsOf(raw);
  const rows = tables.reduce((sum, t) => sum + rowCount(t), 0);
  return (
    <>
      <p>
        A sample of the rows this segment's transactions changed: the first few inserted, updated and deleted rows of each table. A column the target's
        mask matches shows as <PreviewValue value={MASKED} />: it was masked before the rows left the mover. SQL NULL shows as <PreviewValue value={null} />; long values are
        cut and end with …
      </p>
      {tables.length === 0 ? (
        <p>No row changed in this segment, so there are no sample rows.</p>
      ) : (
        <p className="muted small">
          {count(rows, 'sample row')} in {count(tables.length, 'table')}.
        </p>
      )}
      {tables.map((t) => (
        <TablePreviewsSection key={t.table} previews={t} />
      ))}
    </>
  );
}
