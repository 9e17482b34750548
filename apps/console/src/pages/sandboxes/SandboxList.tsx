import { Fragment } from 'react';
import { Link } from 'react-aria-components';
import { useLocation } from 'react-router';
import { useQuery } from 'urql';
import { FormError, Loading, Page, StatusBadge } from '@sigil/web-ui';
import { useStrataRefetch } from '../../api/events.ts';
import { useSession } from '../../app/session.tsx';
import { bytes, formatMoment } from '../../format.ts';
import { graphql } from '../../gql';
import type { ConsoleSandboxesQuery } from '../../gql/graphql.ts';
import { limitShare } from './size.ts';
import { TimeLeft } from './time-left.tsx';
import './sandboxes.css';
import { Scroller } from '../../components/Scroller.tsx';

const SandboxesQuery = graphql(`
  query ConsoleSandboxes {
    strataSandboxes {
      name
      phase
      message
      engine
      time
      expires
      owner
      usedBytes
      sizeLimit
      target {
        namespace
        name
      }
    }
  }
`);

type SandboxRow = ConsoleSandboxesQuery['strataSandboxes'][number];

/** Every living sandbox: what it holds, how it is doing, the time it has left; live from the event stream. */
export default function SandboxList() {
  const { can } = useSession();
  const [{ data, fetching, error }, refetch] = useQuery({ query: SandboxesQuery });
  useStrataRefetch(fetching, refetch, { kinds: ['sandbox', 'restore'] });
  const sandboxes = data?.strataSandboxes;
  // What the sandbox page said when it deleted one (the list may still show it, Deleting, for a moment).
  const notice = (useLocation().state as { notice?: string } | null)?.notice;
  return (
    <Page
      title="Sandboxes"
      description="Private databases restored from a backup for a limited time, to look at or query old data."
      actions={
        can('restorer') && (
          <Link className="button button-primary" href="/restore?mode=sandbox">
            New sandbox
          </Link>
        )
      }
    >
      <div role="status">{notice && <p className="alert alert-success">{notice}</p>}</div>
      <FormError error={error} />
      {!sandboxes && fetching && <Loading what="the sandboxes" />}
      {sandboxes && <SandboxTable sandboxes={sandboxes} canCreate={can('restorer')} />}
    </Page>
  );
}

/** Five columns, so the table fits beside the navigation at 1280 px: the owner under the name, time left under the phase. */
function SandboxTable({ sandboxes, canCreate }: { sandboxes: readonly SandboxRow[]; canCreate: boolean }) {
  return (
    <Scroller label="Sandboxes" className="sbx-table">
      <thead>
        <tr>
          <th scope="col">Sandbox</th>
          <th scope="col">Target</th>
          <th scope="col">Data as of</th>
          <th scope="col">Phase and time left</th>
          <th scope="col">Size used</th>
        </tr>
      </thead>
      <tbody>
        {sandboxes.length === 0 && (
          <tr>
            <td colSpan={5}>No sandbox is running. {canCreate ? 'Create one from a target’s timeline with “New sandbox”.' : 'A restorer creates them from a target’s timeline.'}</td>
          </tr>
        )}
        {sandboxes.map((s) => (
          <SandboxRowView key={s.name} sandbox={s} />
        ))}
      </tbody>
    </Scroller>
  );
}

function SandboxRowView({ sandbox: s }: { sandbox: SandboxRow }) {
  return (
    <tr>
      <th scope="row">
        <Link href={`/sandboxes/${s.name}`}>
          {s.name}
        </Link>
        <div className="muted small">
          {s.engine}, owned by <span className="sbx-owner">{s.owner ? <EmailAddress text={s.owner} /> : 'no one'}</span>
        </div>
      </th>
      <td>
        {s.target ? (
          <Link href={`/targets/${s.target.namespace}/${s.target.name}`}>
            {s.target.namespace}/<wbr />
            {s.target.name}
          </Link>
        ) : (
          <span className="muted">not visible to you</span>
        )}
      </td>
      <td className="sbx-moment">{s.time ? formatMoment(Date.parse(s.time)) : <span className="muted">not known yet</span>}</td>
      <td className="sbx-moment">
        <StatusBadge status={s.phase} />
        {s.phase === 'Failed' && s.message && <div className="small">{s.message}</div>}
        <div>
          <TimeLeft expires={s.expires} phase={s.phase} />
        </div>
        <div className="muted small">until {formatMoment(Date.parse(s.expires))}</div>
      </td>
      <td>
        <span className="sbx-nowrap">{bytes(s.usedBytes)}</span>
        <div className="muted small">{limitShare(s.usedBytes, s.sizeLimit)}</div>
      </td>
    </tr>
  );
}

/** An e-mail address that may wrap before its `@` and after its dots, as people split one, instead of anywhere. */
function EmailAddress({ text }: { text: string }) {
  const parts = text.split(/(?=@)|(?<=\.)/);
  return parts.map((part, i) => (
    <Fragment key={i}>
      {i > 0 && <wbr />}
      {part}
    </Fragment>
  ));
}
