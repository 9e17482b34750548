import { Fragment, useId, useState } from 'react';
import { Button } from 'react-aria-components';
import { StatusBadge } from '@sigil/web-ui';
import { formatMoment } from '../../format.ts';
import { Empty, Scroller } from '../../components/Scroller.tsx';

export interface AuditRow {
  time: string;
  user: string;
  role: string;
  action: string;
  target: string;
  object: string;
  outcome: string;
  from: string;
  /** Action-specific (the status, the reason, the error): any JSON. */
  detail: unknown;
}

const COLUMNS = 7;
/** An apply names every resource it touched: the first few are listed until the row's detail is open. */
const OBJECTS_SHOWN = 3;

/** The audit events, newest first; each one's detail opens beneath it on demand. */
export function AuditTable({ events, filtered }: { events: readonly AuditRow[]; filtered: boolean }) {
  return (
    <Scroller label="Audit events" className="hist-audit">
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">User, role and address</th>
          <th scope="col">Action</th>
          <th scope="col">Target</th>
          <th scope="col">Object</th>
          <th scope="col">Outcome</th>
          <th scope="col">Detail</th>
        </tr>
      </thead>
      <tbody>
        {events.length === 0 && <Empty columns={COLUMNS}>{filtered ? 'No event matches these filters.' : 'Nothing recorded yet: every write to the console API is, whatever its outcome.'}</Empty>}
        {newestFirst(events).map((event, index) => (
          <AuditEventRows key={`${event.time}/${index}`} event={event} />
        ))}
      </tbody>
    </Scroller>
  );
}

/** The API's order, kept: newest first (events of one millisecond stay as the API listed them). */
function newestFirst(events: readonly AuditRow[]): AuditRow[] {
  return events.map((event, index) => ({ event, index })).sort((a, b) => Date.parse(b.event.time) - Date.parse(a.event.time) || a.index - b.index).map(({ event }) => event);
}

function AuditEventRows({ event }: { event: AuditRow }) {
  const [open, setOpen] = useState(false);
  const detailId = useId();
  const dash = <span className="muted">—</span>;
  return (
    <Fragment>
      <tr>
        <th scope="row" className="hist-time">
          <time dateTime={event.time}>{formatMoment(Date.parse(event.time))}</time>
        </th>
        <td className="hist-wrap">
          {event.user}
          <div className="muted small">
            {event.role}
            {event.from && ` from ${event.from}`}
          </div>
        </td>
        <td>
          <code>{event.action}</code>
        </td>
        <td className="hist-wrap">{event.target || dash}</td>
        <td className="hist-wrap">{event.object ? <Objects object={event.object} all={open} /> : dash}</td>
        <td>
          <StatusBadge status={event.outcome || 'unknown'} />
        </td>
        <td>
          <Button className="button hist-small-button" aria-expanded={open} aria-controls={open ? detailId : undefined} onPress={() => setOpen(!open)}>
            {open ? 'Hide' : 'Show'}
            <span className="visually-hidden"> detail of {event.action} by {event.user}</span>
          </Button>
        </td>
      </tr>
      {open && (
        <tr id={detailId} className="hist-detail">
          <td colSpan={COLUMNS}>
            <pre>{JSON.stringify(event.detail ?? {}, null, 2)}</pre>
          </td>
        </tr>
      )}
    </Fragment>
  );
}

/** The objects of an event (an apply lists every resource, comma-separated), one per line: all of them while its detail is open. */
function Objects({ object, all }: { object: string; all: boolean }) {
  const objects = object.split(',');
  const shown = all ? objects : objects.slice(0, OBJECTS_SHOWN);
  return (
    <ul className="hist-objects">
      {shown.map((name, index) => (
        <li key={index}>{name}</li>
      ))}
      {shown.length < objects.length && <li className="muted">and {objects.length - shown.length} more</li>}
    </ul>
  );
}
