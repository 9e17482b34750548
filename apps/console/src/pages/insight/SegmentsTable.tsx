import { Fragment, useId, useState } from 'react';
import { Button, Link } from 'react-aria-components';
import { count, formatMoment } from '../../format.ts';
import { Empty, Scroller } from '../../components/Scroller.tsx';
import { TableName } from './TableName.tsx';
import { sameDay, tableCountsOf, timeOfDay, type Segment } from './insight-model.ts';
import { previewsPath } from './previews-model.ts';

/**
 * Whose segments these are, for the links to their sample rows: the changes shown (`since`, `until`) are where the
 * sample rows page leads back; `mayReadRows` whether the caller's role reaches restorer (the API refuses the others).
 */
export interface SegmentLinks {
  namespace: string;
  name: string;
  since?: string;
  until?: string;
  mayReadRows: boolean;
}

const timeOf = (at: string | undefined) => (at ? Date.parse(at) : NaN);

/** When a segment's changes happened, in full (the name of its Details button). */
function segmentTime(segment: Segment): string {
  const first = timeOf(segment.firstTime);
  const last = timeOf(segment.lastTime);
  if (Number.isNaN(first)) return Number.isNaN(last) ? 'unknown time' : formatMoment(last);
  return Number.isNaN(last) || last === first ? formatMoment(first) : `${formatMoment(first)} to ${formatMoment(last)}`;
}

/** The same, shown: the first moment, and under it until when (its time of day when on the same day). */
function SegmentTime({ segment }: { segment: Segment }) {
  const first = timeOf(segment.firstTime);
  const last = timeOf(segment.lastTime);
  if (Number.isNaN(first) || Number.isNaN(last) || first === last) return <>{segmentTime(segment)}</>;
  return (
    <>
      {formatMoment(first)}
      <div className="muted small">until {sameDay(first, last) ? timeOfDay(last) : formatMoment(last)}</div>
    </>
  );
}

/**
 * Change-log segments, oldest first: when, how many commits, what they did in words; each one's tables (inserts,
 * updates, deletes, truncates) and schema statements on demand, and the link to its masked sample rows (or why it has
 * none).
 */
export function SegmentsTable({ segments, label, links }: { segments: readonly Segment[]; label: string; links: SegmentLinks }) {
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const idPrefix = useId();
  const toggle = (key: string) => setOpen((shown) => (shown.has(key) ? new Set([...shown].filter((k) => k !== key)) : new Set([...shown, key])));
  return (
    <Scroller label={label} className="insight-segments">
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Commits</th>
          <th scope="col">What changed</th>
        </tr>
      </thead>
      <tbody>
        {segments.length === 0 && <Empty columns={3}>No change-log segment in this stretch of time.</Empty>}
        {segments.map((segment, index) => {
          const key = segment.name ?? segment.key ?? String(index);
          const detailsId = `${idPrefix}-details-${index}`;
          const time = segmentTime(segment);
          return (
            <Fragment key={key}>
              <tr>
                <th scope="row">
                  <SegmentTime segment={segment} />
                  {segment.partial && <div className="muted small">partial (still being written)</div>}
                </th>
                <td>{(segment.commits ?? 0).toLocaleString()}</td>
                <td>
                  <div className="insight-explanation">{segment.explanation || <span className="muted">No summary recorded for this segment.</span>}</div>
                  {segment.previewsError && <p className="small insight-previews-error">No sample rows: {segment.previewsError}</p>}
                  <div className="insight-actions">
                    <Button className="button button-quiet" aria-expanded={open.has(key)} aria-controls={open.has(key) ? detailsId : undefined} aria-label={`Details of the changes at ${time}`} onPress={() => toggle(key)}>
                      Details
                    </Button>
                    <SampleRowsLink segment={segment} time={time} links={links} />
                  </div>
                </td>
              </tr>
              {open.has(key) && (
                <tr id={detailsId}>
                  <td colSpan={3}>
                    <SegmentDetails segment={segment} time={time} />
                  </td>
                </tr>
              )}
            </Fragment>
          );
        })}
      </tbody>
    </Scroller>
  );
}

function SegmentDetails({ segment, time }: { segment: Segment; time: string }) {
  const tables = tableCountsOf(segment.tables);
  const ddl = segment.ddl ?? [];
  return (
    <div className="insight-segment-details">
      {tables.length === 0 ? (
        <p className="muted">No table's rows changed in this segment.</p>
      ) : (
        <table className="table insight-table" aria-label={`Tables changed at ${time}`}>
          <thead>
            <tr>
              <th scope="col">Table</th>
              <th scope="col">Inserts</th>
              <th scope="col">Updates</th>
              <th scope="col">Deletes</th>
              <th scope="col">Truncates</th>
            </tr>
          </thead>
          <tbody>
            {tables.map((t) => (
              <tr key={t.table}>
                <th scope="row">
                  <TableName name={t.table} />
                </th>
                <td>{t.inserts.toLocaleString()}</td>
                <td>{t.updates.toLocaleString()}</td>
                <td>{t.deletes.toLocaleString()}</td>
                <td>{t.truncates.toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {ddl.length > 0 ? (
        <>
          <p className="insight-ddl-title">{count(ddl.length, 'schema statement')}</p>
          <pre className="insight-code" tabIndex={0} role="region" aria-label={`Schema statements at ${time}`}>
            {ddl.join('\n')}
          </pre>
        </>
      ) : (
        <p className="muted small">No schema statement.</p>
      )}
      {segment.name && (
        <p className="muted small">
          Segment <code>{segment.name}</code>
        </p>
      )}
    </div>
  );
}

/** The link to a segment's sample rows when it has some; a role below restorer reads how many there are. */
function SampleRowsLink({ segment, time, links }: { segment: Segment; time: string; links: SegmentLinks }) {
  if (!segment.previewsKey || !segment.name) return null;
  const rows = segment.previewRows;
  // Previews of no row (no table the previews cover changed): nothing to open.
  if (rows === 0) return <span className="muted small">No sample rows</span>;
  if (!links.mayReadRows) return <span className="muted small">{rows === undefined ? 'Sample rows' : count(rows, 'sample row')} (the restorer role sees them)</span>;
  const shown = rows === undefined ? 'Sample rows' : `Sample rows (${rows.toLocaleString()})`;
  return (
    <Link href={previewsPath(links.namespace, links.name, segment.name, links)} aria-label={`${shown} of the changes at ${time}`}>
      {shown}
    </Link>
  );
}
